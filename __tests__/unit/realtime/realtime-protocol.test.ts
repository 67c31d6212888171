/**
 * The realtime door's pure parts (lib/doors/realtime): a Postgres Changes `filter` becomes the
 * list route's query parameters (so parse, policy and allow-list judge it), an operator that is
 * not served is refused, and Phoenix messages read and write in both serializer versions.
 */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { parseRealtimeFilter } from '../../../lib/doors/realtime/parse-realtime-filter';
import { readMessage, readVsn, writeMessage } from '../../../lib/doors/realtime/phoenix-message';

describe('parseRealtimeFilter', () => {
  it.each([
    ['status=eq.paid', [['status', 'eq.paid']]],
    ['amount=neq.3', [['amount', 'ne.3']]],
    ['amount=lt.3', [['amount', 'lt.3']]],
    ['amount=lte.3', [['amount', 'lte.3']]],
    ['amount=gt.3', [['amount', 'gt.3']]],
    ['amount=gte.3', [['amount', 'gte.3']]],
    ['status=in.(paid,"on hold")', [['status', 'in.("paid","on hold")']]],
    ['status=in.("a,b","say \\"hi\\"")', [['status', 'in.("a,b","say ""hi""")']]],
    ['title=eq."a, b"', [['title', 'eq.a, b']]],
    ['status=eq.paid,amount=gte.2', [['status', 'eq.paid'], ['amount', 'gte.2']]],
    ['note=eq.x.y', [['note', 'eq.x.y']]],
  ])('%s', (filter, query) => {
    expect(parseRealtimeFilter(filter)).toEqual(query);
  });

  it.each(['status=like.p*', 'status=is.null', 'status=not.eq.x', 'status', 'status=paid', '=eq.x', 'status=in.paid', 'status=eq."open'])('refuses %s', (filter) => {
    expect(() => parseRealtimeFilter(filter)).toThrow(GatewayError);
    try {
      parseRealtimeFilter(filter);
    } catch (err) {
      expect((err as GatewayError).code).toBe('PARSE_ERROR');
    }
  });
});

describe('Phoenix messages', () => {
  it('vsn 2.0.0: arrays; 1.0.0: objects; another version is refused', () => {
    expect(readVsn('2.0.0')).toBe('2.0.0');
    expect(readVsn(null)).toBe('1.0.0');
    expect(readVsn('3.0.0')).toBeUndefined();
    expect(readMessage('["1","2","realtime:x","phx_join",{"config":{}}]', '2.0.0')).toEqual({ joinRef: '1', ref: '2', topic: 'realtime:x', event: 'phx_join', payload: { config: {} } });
    expect(readMessage('{"join_ref":null,"ref":"3","topic":"phoenix","event":"heartbeat","payload":{}}', '1.0.0')).toEqual({ joinRef: null, ref: '3', topic: 'phoenix', event: 'heartbeat', payload: {} });
    expect(JSON.parse(writeMessage('2.0.0', '1', null, 't', 'e', '{"a":1}'))).toEqual(['1', null, 't', 'e', { a: 1 }]);
    expect(JSON.parse(writeMessage('1.0.0', null, '4', 't', 'e', '{}'))).toEqual({ join_ref: null, ref: '4', topic: 't', event: 'e', payload: {} });
  });

  it.each(['not json', '[1,2,3]', '["1","2",3,"e",{}]', '["1","2","t","e",[]]', '{"topic":"t"}'])('an unreadable message is undefined: %s', (text) => {
    expect(readMessage(text, text.startsWith('{') ? '1.0.0' : '2.0.0')).toBeUndefined();
  });
});
