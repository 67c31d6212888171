/**
 * `gateway.docs` (docs/getting-started.md, "The API explorer"): an Express router serving an
 * interactive reference of the caller's own OpenAPI document, with Swagger UI
 * (swagger-ui-dist, served from the installed package). Off unless the host mounts it.
 *
 * Why Swagger UI: swagger-ui-dist is static files with no server part and no CDN default, so
 * every byte comes from node_modules and a strict Content-Security-Policy fits (script-src
 * 'self'); it is maintained by SmartBear with a release every few weeks, reads OpenAPI 3.1, and
 * has "Try it out" built in. Scalar's Express package loads its script from a CDN unless a second
 * package is installed and served by hand.
 *
 * The page holds no schema of its own: the browser fetches `{docs_api_url}/openapi.json` with the
 * token typed in the page, and the gateway answers with that caller's document (policy applied),
 * or 401 without a token when require_auth is on.
 */
import path from 'node:path';
import express from 'express';
import type { Request, Response, Router } from 'express';
import { explorerCss, explorerPage } from './explorer-page';
import { explorerScript } from './explorer-script';
import { swaggerUiDir } from './swagger-ui-dir';

export interface DocsOptions {
  /** Where the gateway is mounted: a path on this origin, or an absolute URL. */
  readonly apiUrl: string;
  /** The swagger-ui-dist package's directory; by default where Node resolves it from tablegate. */
  readonly assetDir?: string | undefined;
}

/** The swagger-ui-dist files the page uses, served as they are. */
const assets = { 'swagger-ui.css': 'text/css; charset=utf-8', 'swagger-ui-bundle.js': 'text/javascript; charset=utf-8' } as const;

export function createDocsRouter(options: DocsOptions): Router {
  const page = explorerPage(options.apiUrl);
  const policy = contentSecurityPolicy(options.apiUrl);
  // At creation: a missing swagger-ui-dist is a GatewayConfigError when the host creates (mounts)
  // the router, not a page whose assets answer 404.
  const assetDir = options.assetDir ?? swaggerUiDir();

  const headers = (res: Response, type: string): void => {
    res.setHeader('Content-Type', type);
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
  };

  const router = express.Router();
  router.get('/', (req: Request, res: Response) => {
    // Relative asset URLs need the trailing slash: /docs -> /docs/.
    const [pathPart, query] = splitQuery(req.originalUrl);
    if (!pathPart.endsWith('/')) return res.redirect(301, `${pathPart}/${query}`);
    headers(res, 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.send(page);
  });
  router.get('/explorer.js', (_req, res) => {
    headers(res, 'text/javascript; charset=utf-8');
    res.send(explorerScript);
  });
  router.get('/explorer.css', (_req, res) => {
    headers(res, 'text/css; charset=utf-8');
    res.send(explorerCss);
  });
  for (const [file, type] of Object.entries(assets)) {
    router.get(`/${file}`, (_req, res, next) => {
      headers(res, type);
      res.sendFile(path.join(assetDir, file), { maxAge: '1h' }, (err) => err && next(err));
    });
  }
  return router;
}

/**
 * Only what the page needs: its own scripts and styles (Swagger UI sets inline style attributes,
 * hence 'unsafe-inline' for styles only), data: images for its icons, and requests to the
 * gateway. No frames, no forms posting anywhere, no other origin.
 */
export function contentSecurityPolicy(apiUrl: string): string {
  const origin = /^https?:\/\//i.test(apiUrl) ? ` ${new URL(apiUrl).origin}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self'${origin}`,
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function splitQuery(url: string): [string, string] {
  const at = url.indexOf('?');
  return at < 0 ? [url, ''] : [url.slice(0, at), url.slice(at)];
}
