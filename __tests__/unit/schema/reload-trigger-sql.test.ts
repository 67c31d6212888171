/**
 * The reload event trigger's SQL (lib/schema/reload-trigger-sql.ts): names are quoted, the
 * channel must be a plain name, and docs/scaling-out.md shows exactly what `--print` prints.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { reloadTriggerScript, reloadTriggerStatements } from '../../../lib/schema/reload-trigger-sql';

test('the statements replace the function and recreate both event triggers', () => {
  const statements = reloadTriggerStatements('tablegate_reload');
  expect(statements).toHaveLength(5);
  expect(statements[0]).toMatch(/^CREATE OR REPLACE FUNCTION "public"\."tablegate_reload_notify"\(\) RETURNS event_trigger/);
  expect(statements[0]).toContain('NOTIFY "tablegate_reload";');
  expect(statements.slice(1)).toEqual([
    'DROP EVENT TRIGGER IF EXISTS "tablegate_reload_ddl"',
    'CREATE EVENT TRIGGER "tablegate_reload_ddl" ON ddl_command_end EXECUTE FUNCTION "public"."tablegate_reload_notify"()',
    'DROP EVENT TRIGGER IF EXISTS "tablegate_reload_drop"',
    'CREATE EVENT TRIGGER "tablegate_reload_drop" ON sql_drop EXECUTE FUNCTION "public"."tablegate_reload_notify"()',
  ]);
});

test('the function schema is quoted as an identifier', () => {
  const [fn] = reloadTriggerStatements('c1', 'my "ops"');
  expect(fn).toMatch(/^CREATE OR REPLACE FUNCTION "my ""ops"""\."tablegate_reload_notify"\(\)/);
  expect(fn).toContain('NOTIFY "c1";');
});

test.each(['Tablegate', 'a-b', "x'; DROP TABLE t; --", 'x$tablegate$', '', 'a'.repeat(64), '1abc'])('refuses the channel %j', (channel) => {
  expect(() => reloadTriggerStatements(channel)).toThrow(/not a reload channel name/);
});

test('docs/scaling-out.md shows the script that `tablegate install-reload-trigger --print` prints', () => {
  const doc = readFileSync(path.join(__dirname, '../../../docs/scaling-out.md'), 'utf8');
  expect(doc).toContain(reloadTriggerScript('tablegate_reload'));
});
