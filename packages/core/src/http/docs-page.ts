/**
 * The offline API reference page. Its files (swagger-ui's bundle and stylesheet) come from the `docs` option,
 * served under `{prefix}/docs/`; relative URLs keep it working under any mount prefix.
 */
export const docsPage = `<!doctype html>
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
export const DOCS_INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true });\n`

/** The files of swagger-ui-dist the page needs, by name under `{prefix}/docs/`. */
export const DOCS_ASSET_FILES = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8"
} as const
