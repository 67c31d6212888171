/**
 * The API explorer's HTML: a token field above Swagger UI. Every asset is relative to the page
 * and served by the docs router from the installed swagger-ui-dist package; none from a CDN.
 */
export function explorerPage(apiUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tablegate API explorer</title>
<link rel="stylesheet" href="swagger-ui.css">
<link rel="stylesheet" href="explorer.css">
</head>
<body data-api-url="${escapeAttribute(apiUrl)}">
<form id="tablegate-token" class="tablegate-token">
<label for="tablegate-token-input">Token</label>
<input id="tablegate-token-input" name="token" type="password" autocomplete="off" spellcheck="false" placeholder="a JWT: the page then shows what this caller may use">
<button type="submit">Use token</button>
</form>
<div id="swagger-ui"></div>
<script src="swagger-ui-bundle.js"></script>
<script src="explorer.js"></script>
</body>
</html>
`;
}

export const explorerCss = `.tablegate-token { display: flex; gap: .5em; align-items: center; max-width: 1460px; margin: 1em auto 0; padding: 0 20px; font-family: sans-serif; }
.tablegate-token input { flex: 1; padding: .4em; font-family: monospace; }
`;

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
