/**
 * A live screen as a Supabase project has it: supabase-js's createClient(projectUrl, key), the
 * user's token for Realtime, and `channel().on('postgres_changes', ...)` on the notes table.
 * Nothing in it knows about tablegate. In Node before 22 realtime-js needs a WebSocket
 * implementation: `ws`, given as `realtime.transport` (browsers have their own).
 *
 * Run: URL=http://localhost:3000 TOKEN=<jwt> npx ts-node examples/postgrest-app/live-script.ts
 */
import WebSocket from 'ws';
import { createClient, type RealtimePostgresChangesPayload } from '@supabase/supabase-js';

export interface LiveNotes {
  /** What the screen was told, in order: `INSERT script-1`, `UPDATE script-1`, `DELETE 12`. */
  readonly seen: string[];
  stop(): Promise<void>;
}

type Note = { id: number; slug: string; body: string };

/** Subscribes to every change of `schema.notes` the token's caller may see; resolves once subscribed. */
export async function watchNotes(url: string, token: string, schema = 'pgrst'): Promise<LiveNotes> {
  const supabase = createClient(url, 'public-anon-key', {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { transport: WebSocket as never },
  });
  await supabase.realtime.setAuth(token);
  const seen: string[] = [];
  const channel = supabase.channel('notes');
  await new Promise<void>((resolve, reject) => {
    channel
      .on('postgres_changes', { event: '*', schema, table: 'notes' }, (p: RealtimePostgresChangesPayload<Note>) => {
        seen.push(p.eventType === 'DELETE' ? `DELETE ${String(p.old.id)}` : `${p.eventType} ${p.new.slug}`);
      })
      .subscribe((status, err) => {
        if (status === 'SUBSCRIBED') resolve();
        else if (status === 'CHANNEL_ERROR' || status === 'TIMED_OUT') reject(err ?? new Error(status));
      });
  });
  return {
    seen,
    async stop() {
      await supabase.removeAllChannels();
      await supabase.realtime.disconnect();
    },
  };
}

if (require.main === module) {
  watchNotes(process.env['URL'] ?? 'http://localhost:3000', process.env['TOKEN'] ?? '')
    .then((live) => {
      console.log('subscribed; changes to notes appear below (Ctrl-C to stop)');
      setInterval(() => {
        for (const line of live.seen.splice(0)) console.log(line);
      }, 200);
    })
    .catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}
