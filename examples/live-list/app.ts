/**
 * A live list for two tenants side by side (docs/change-feed.md): one page, two panes, each with
 * its own tenant's token. Each pane reads the list once (`GET /api/{table}`), then follows
 * `GET /api/{table}/_changes` over `fetch` streaming with its token (a browser's EventSource cannot
 * send an Authorization header), resuming with Last-Event-ID. What each pane shows is decided by
 * the database as that tenant: the other tenant's rows never reach it.
 *
 * Demo only: the page is given two tokens the server signs for the tenants named in the options.
 * A real app gets its token from its login. `__tests__/integration/change-feed.test.ts` opens this
 * page in headless Chromium, so it cannot silently stop working.
 *
 * Run (a database with wal_level = logical and `tablegate install-change-feed` applied):
 *   DATABASE_URL=... FEED_DATABASE_URL=... JWT_SECRET=... TENANTS=<uuid>,<uuid> TABLE=notes npx ts-node examples/live-list/app.ts
 */
import express from 'express';
import jwt from 'jsonwebtoken';
import { createGateway } from 'tablegate';
import type { Gateway } from 'tablegate';

export interface LiveListOptions {
  readonly databaseUrl: string;
  /** A role with REPLICATION for the change feed's own connection. */
  readonly feedDatabaseUrl: string;
  readonly jwtSecret: string;
  readonly schemas: readonly string[];
  readonly table: string;
  /** The two tenants shown side by side. */
  readonly tenants: readonly [string, string];
  readonly tenantColumn?: string;
  readonly slotName?: string;
}

export function createLiveListApp(o: LiveListOptions): { app: express.Express; gateway: Gateway } {
  const gateway = createGateway({
    databaseUrl: o.databaseUrl,
    jwtSecret: o.jwtSecret,
    schemas: [...o.schemas],
    changeFeed: { enabled: true, databaseUrl: o.feedDatabaseUrl, tenantColumn: o.tenantColumn ?? 'tenant_id', ...(o.slotName ? { slotName: o.slotName } : {}) },
  });
  const app = express();
  app.use('/api', gateway);
  app.get('/', (_req, res) => {
    const panes = o.tenants.map((tenant, i) => ({ name: `tenant ${i === 0 ? 'A' : 'B'}`, id: i === 0 ? 'a' : 'b', token: jwt.sign({ tenant_id: tenant, user_id: `demo-${i}`, role: 'member' }, o.jwtSecret, { algorithm: 'HS256', expiresIn: '1h' }) }));
    res.type('html').send(page(o.table, panes));
  });
  return { app, gateway };
}

function page(table: string, panes: readonly { name: string; id: string; token: string }[]): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Live ${escapeHtml(table)}</title>
<style>body{font-family:sans-serif;display:flex;gap:2em} section{flex:1} li{font-family:monospace}</style></head>
<body>
${panes.map((p) => `<section><h2>${escapeHtml(p.name)}</h2><ul id="list-${p.id}" data-state="loading"></ul></section>`).join('\n')}
<script>
const table = ${JSON.stringify(table)};
const panes = ${JSON.stringify(panes)};
for (const pane of panes) follow(pane);

async function follow(pane) {
  const list = document.getElementById('list-' + pane.id);
  const rows = new Map();
  const show = () => {
    list.replaceChildren(...[...rows.values()].map((r) => {
      const li = document.createElement('li');
      li.dataset.id = String(r.id);
      li.textContent = JSON.stringify(r);
      return li;
    }));
  };
  const load = async () => {
    // The first page of the list (an error, e.g. a page above max_response_bytes, leaves it empty).
    rows.clear();
    try {
      const res = await fetch('/api/' + encodeURIComponent(table) + '?limit=100', { headers: { Authorization: 'Bearer ' + pane.token } });
      const body = await res.json();
      for (const r of body.data || []) rows.set(String(r.id), r);
    } catch (e) {}
    show();
  };
  await load();
  let lastEventId;
  for (;;) {
    try {
      const headers = { Accept: 'text/event-stream', Authorization: 'Bearer ' + pane.token };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      const res = await fetch('/api/' + encodeURIComponent(table) + '/_changes', { headers });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      let ev = { data: [] };
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let nl;
        while ((nl = buffer.indexOf('\\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (ev.id) lastEventId = ev.id;
            const data = ev.data.length ? JSON.parse(ev.data.join('\\n')) : null;
            if (ev.event === 'ready') list.dataset.state = 'live';
            else if (ev.event === 'insert' || ev.event === 'update') { rows.set(String(data.row.id), data.row); show(); }
            else if (ev.event === 'delete') { rows.delete(String(Object.values(data.key)[0])); show(); }
            else if (ev.event === 'reload') await load();
            ev = { data: [] };
          } else if (line.startsWith('id: ')) ev.id = line.slice(4);
          else if (line.startsWith('event: ')) ev.event = line.slice(7);
          else if (line.startsWith('data: ')) ev.data.push(line.slice(6));
        }
      }
    } catch (e) {}
    await new Promise((r) => setTimeout(r, 1000));
  }
}
</script>
</body></html>`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

if (require.main === module) {
  const env = (name: string): string => {
    const v = process.env[name];
    if (!v) throw new Error(`set ${name}`);
    return v;
  };
  const [a, b] = env('TENANTS').split(',');
  const { app, gateway } = createLiveListApp({ databaseUrl: env('DATABASE_URL'), feedDatabaseUrl: env('FEED_DATABASE_URL'), jwtSecret: env('JWT_SECRET'), schemas: ['public'], table: process.env['TABLE'] ?? 'notes', tenants: [a!, b!] });
  void gateway.ready.then(() => app.listen(3000, '127.0.0.1', () => console.log('http://127.0.0.1:3000/')));
}
