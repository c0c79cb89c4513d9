/**
 * The offline API reference page, served at `{prefix}/docs`. Its files (the init script, the favicon, swagger-ui's
 * bundle and stylesheet) are served under `{prefix}/docs/`; relative URLs keep it working under any mount prefix.
 * swagger-ui's files are linked with `?v=<swagger-ui-dist version>`: they are cached for a year as immutable
 * (`IMMUTABLE`), so a release with another swagger-ui-dist changes their URLs and browsers fetch them again.
 */
export const apiReferencePage = (swaggerUiVersion: string): string => {
  const version = encodeURIComponent(swaggerUiVersion)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Accord API reference</title>
<link rel="icon" type="image/svg+xml" href="docs/favicon.svg">
<link rel="stylesheet" href="docs/swagger-ui.css?v=${version}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js?v=${version}"></script>
<script src="docs/init.js"></script>
</body>
</html>
`
}

/**
 * Kept out of the page so a strict Content-Security-Policy (no inline script) can apply. `validatorUrl: null`: the
 * page is offline, and swagger-ui's default would load a badge from validator.swagger.io.
 */
export const API_REFERENCE_INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null });\n`

/** A small SVG icon (an "A" on a dark square), so the browser's request for the page's icon finds one. */
export const API_REFERENCE_FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f2937"/><path d="M9 25 16 7l7 18m-11.5-6h9" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>\n`

/** The files of swagger-ui-dist the page needs, by name under `{prefix}/docs/`, with their media types. */
export const SWAGGER_UI_FILES = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8"
} as const

/** For swagger-ui's files, whose URLs carry swagger-ui-dist's version (docs/api.md, "Headers on every response"). */
export const IMMUTABLE = "public, max-age=31536000, immutable"

/**
 * For the page, init.js and the favicon, whose URLs carry no version: a browser may keep them but asks again each
 * time, so a new release shows at once (docs/api.md, "Headers on every response").
 */
export const REVALIDATE = "no-cache"
