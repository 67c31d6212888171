import { SlotSet } from '../../../lib/db/slot-set';

const item = (name: string) => ({ name, slot: -1 });

describe('SlotSet', () => {
  test('add, delete and items: a deleted item is gone at once, its slot reused', () => {
    const set = new SlotSet<ReturnType<typeof item>>();
    const a = item('a');
    const b = item('b');
    const c = item('c');
    set.add(a);
    set.add(b);
    expect(set.size).toBe(2);
    expect(set.delete(a)).toBe(true);
    expect(a.slot).toBe(-1);
    expect(set.delete(a)).toBe(false); // twice: no effect
    expect(set.items().map((i) => i.name)).toEqual(['b']);
    set.add(c);
    expect(c.slot).toBe(0); // a's slot
    expect(set.items().map((i) => i.name).sort()).toEqual(['b', 'c']);
    expect(set.size).toBe(2);
  });

  test('an item of another set is not deleted; clear empties and resets the slots', () => {
    const one = new SlotSet<ReturnType<typeof item>>();
    const two = new SlotSet<ReturnType<typeof item>>();
    const a = item('a');
    const b = item('b');
    one.add(a);
    two.add(b);
    expect(one.delete(b)).toBe(false);
    expect(two.size).toBe(1);
    one.clear();
    expect(one.size).toBe(0);
    expect(one.items()).toEqual([]);
    expect(a.slot).toBe(-1);
  });
});
