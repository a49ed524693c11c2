// repeatedMembers (src/http/json-members.ts): the top-level names a JSON object's text repeats, which
// JSON.parse would silently collapse to the last value (the OAuth endpoints refuse them).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { repeatedMembers } from '../../src/http/json-members';

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

test.run();
