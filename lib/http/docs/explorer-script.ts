/**
 * The API explorer's own script, served as a file (the page's Content-Security-Policy allows no
 * inline script). It starts Swagger UI on the caller's OpenAPI document at
 * `{docs_api_url}/openapi.json` and sends the token typed in the page's field with every request,
 * the document's own fetch included, so the page shows exactly what that caller's document holds:
 * without a token, the anonymous caller's (a 401 when require_auth is on). The token stays in the
 * page's memory: nothing is stored. `validatorUrl: null` keeps Swagger UI from calling its public
 * validator.
 */
export const explorerScript = `(function () {
  'use strict';
  var api = (document.body.getAttribute('data-api-url') || '/api').replace(/\\/+$/, '');
  var form = document.getElementById('tablegate-token');
  var input = document.getElementById('tablegate-token-input');
  var token = '';
  function show() {
    window.ui = SwaggerUIBundle({
      url: api + '/openapi.json',
      dom_id: '#swagger-ui',
      validatorUrl: null,
      tryItOutEnabled: true,
      requestInterceptor: function (req) {
        if (token) req.headers['Authorization'] = 'Bearer ' + token;
        return req;
      }
    });
  }
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    token = input.value.trim();
    show();
  });
  show();
})();
`;
