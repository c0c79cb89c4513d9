/**
 * The offline API reference page, served at `{prefix}/docs`. Its files (the init script, swagger-ui's bundle and
 * stylesheet) are served under `{prefix}/docs/`; relative URLs keep it working under any mount prefix.
 */
export const API_REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Accord API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`

/** Kept out of the page so a strict Content-Security-Policy (no inline script) can apply. */
export const API_REFERENCE_INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true });\n`

/** The files of swagger-ui-dist the page needs, by name under `{prefix}/docs/`, with their media types. */
export const SWAGGER_UI_FILES = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8"
} as const
