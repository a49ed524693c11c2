// Renders the API reference from the document the server serves. A file of its own, not an inline
// script, so the page's Content-Security-Policy can stay `script-src 'self'`.
(() => {
  const root = document.getElementById('reference');
  window.ui = window.SwaggerUIBundle({
    url: root.dataset.openapi,
    domNode: root,
    deepLinking: true,
    // The default sends the document to validator.swagger.io: no request leaves for another origin.
    validatorUrl: null,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayOperationId: true,
    displayRequestDuration: true,
    filter: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
})();
