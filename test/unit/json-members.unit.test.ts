// repeatedMembers (src/http/json-members.ts): the top-level names a JSON object's text repeats, which
// JSON.parse would silently collapse to the last value (the OAuth endpoints refuse them), and
// scanJsonText's `repeated`, the first repeated name at any depth.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repeatedMembers, scanJsonText } from '../../src/http/json-members';

/** The deep mode's answer: the path of the first name repeated at any depth. */
const repeatedMemberPath = (text: string) => scanJsonText(text).repeated;

test('a repeated top-level name, however spelled or spaced, is found', () => {
  assert.equal(repeatedMembers('{"code":"a","code":"b"}'), ['code']);
  assert.equal(repeatedMembers('\uFEFF {\n "code" : "a" ,\t"\\u0063ode":"b"}'), ['code']);
  assert.equal(repeatedMembers('{"a":1,"b":[1,{"a":2}],"a":null,"b":true}'), ['a', 'b']);
});

test('names inside values, nested objects and strings are not the top level', () => {
  assert.equal(repeatedMembers('{"code":"a","x":{"code":1,"code":2}}'), []);
  assert.equal(repeatedMembers('{"s":"\\"code\\":1,\\"s\\":2 } {","t":"}]"}'), []);
  assert.equal(repeatedMembers('{"n":-1.5e3,"m":false,"k":[[],{}]}'), []);
  assert.equal(repeatedMembers('{}'), []);
  assert.equal(repeatedMembers('[{"a":1,"a":2}]'), []);
});

test('scanJsonText(…).repeated: the path of the first name repeated at any depth, however spelled', () => {
  assert.is(repeatedMemberPath('{"a":1,"a":2}'), 'a');
  assert.is(repeatedMemberPath('{"a":1,"b":{"c":1,"c":2}}'), 'b.c');
  assert.is(repeatedMemberPath('{"a":[1,{"x":1},{"y":1, "y" :2}]}'), 'a.2.y');
  assert.is(repeatedMemberPath('{"\\u0061":1,"a":2}'), 'a');
  assert.is(repeatedMemberPath('{"x\\\\":1,"x\\\\":2}'), 'x\\');
  assert.is(repeatedMemberPath('{"a":"\\\\","a":1}'), 'a');
  assert.is(repeatedMemberPath('{"n":1e5,"m":[1,2,3],"n":0}'), 'n');
  // Past the first 16 names of one object (a Set takes over from the list).
  const many = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`);
  assert.is(repeatedMemberPath(`{${many.join(',')}}`), null);
  assert.is(repeatedMemberPath(`{${many.join(',')},"k3":0}`), 'k3');
  assert.is(repeatedMemberPath(`{${many.join(',')},"k39":0}`), 'k39');
});

test('scanJsonText(…).repeated: siblings, strings and arrays of objects repeat nothing', () => {
  assert.is(repeatedMemberPath('{"s":"\\"a\\":1,\\"a\\":2","a":1}'), null);
  assert.is(repeatedMemberPath(' { "a" : [ ] , "b" : { } , "c" : -1.5e3 , "d" : true , "e" : null } '), null);
  assert.is(repeatedMemberPath('{"a":{},"b":{"a":1},"c":[{"a":1},{"a":1}]}'), null);
  assert.is(repeatedMemberPath('{"a":"x\\"y","b":"\\\\","c":"\\u0022"}'), null);
  assert.is(repeatedMemberPath('{}'), null);
});

test('one scanner, two modes: the top-level repeats are what the deep mode finds at the top level', () => {
  const key = fc.constantFrom('a', 'b', 'c', '\\u0061', 'x"y', 'é');
  const value = fc.jsonValue({ maxDepth: 3 });
  fc.assert(
    fc.property(fc.array(fc.tuple(key, value), { maxLength: 6 }), (members) => {
      const text = `{${members.map(([k, v]) => `"${k.replace('"', '\\"')}":${JSON.stringify(v)}`).join(',')}}`;
      const names = members.map(([k]) => JSON.parse(`"${k.replace('"', '\\"')}"`) as string);
      const expected = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
      assert.equal(repeatedMembers(text).sort(), expected.sort(), text);
      // The deep mode's first repeat is a top-level one or inside a value (then not a top-level name).
      const path = repeatedMemberPath(text);
      if (expected.length === 0) {
        if (path !== null) assert.ok(path.includes('.'), text);
      } else {
        assert.ok(path !== null, `a top-level repeat is found: ${text}`);
        assert.ok(expected.includes(path) || path.includes('.'), `${path}: ${text}`);
      }
    }),
    { seed: 7, numRuns: 500 },
  );
});

test.run();
