// Whether a `pattern` of the OpenAPI document means the same to the regex engines partners' generated
// validators use: ECMA-262 without the u flag (what OpenAPI 3.0.3 names: ECMA-262 5.1, which has no
// flags), with it (Ajv), Python's `re` (run in python3), Java's java.util.regex (run when `java` is on
// PATH), and RE2 (Go's regexp), which has no engine here, so the constructs it lacks are found by
// reading the pattern.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What in `p` some of those engines refuse or read differently, one line each (none: portable).
 * Read, not parsed: it errs towards flagging, and a flagged pattern is rewritten in plain classes.
 */
export function unportableConstructs(p: string): string[] {
  const found: string[] = [];
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    const next = p[i + 1] ?? '';
    const at = `at ${i}`;
    if ((p.codePointAt(i) ?? 0) > 0xffff)
      found.push(`${at}: a character beyond U+FFFF is two units without the u flag`);
    if (c === '\\') {
      if (/[1-9]/.test(next) || (next === 'k' && p[i + 2] === '<'))
        found.push(`${at}: backreference \\${next} (RE2 has none)`);
      else if (/[pP]/.test(next)) found.push(`${at}: \\${next}{…} (without the u flag the letter ${next})`);
      else if (/[dDsSwWbB]/.test(next))
        found.push(`${at}: \\${next} (Python's re and .NET read it over all of Unicode, JS and RE2 not)`);
      else if (next === 'u') found.push(`${at}: \\u escape (RE2 has none)`);
      else if (next === 'x' && !/^[0-9a-fA-F]{2}$/.test(p.slice(i + 2, i + 4)))
        found.push(`${at}: \\x without two hex digits`);
      // \v too: U+000B alone to JS, Python and RE2, any vertical white space to Java.
      else if (/[A-Za-z0]/.test(next) && !/[xtnrf]/.test(next))
        found.push(`${at}: \\${next} (an escape the engines do not share)`);
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      else if (c === '[' || ['&&', '--', '~~', '||'].includes(c + next))
        found.push(`${at}: ${c}${next} in a class (a set operation to Python, a warning today)`);
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (next === ']' || (next === '^' && p[i + 2] === ']')) found.push(`${at}: an empty class`);
      continue;
    }
    if (c === '(' && next === '?') {
      const kind = p.slice(i + 2, i + 4);
      if (/^[=!]/.test(kind) || kind === '<=' || kind === '<!')
        found.push(`${at}: lookaround (?${kind.replace(/[^=!<]/g, '')} (RE2 has none)`);
      else if (kind[0] !== ':') found.push(`${at}: (?${kind[0]} (named groups and flags differ per engine)`);
    }
    if (c === '{') {
      const rep = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
      if (!rep) found.push(`${at}: a literal { (Python reads {,n} as a repetition)`);
      else if (Number(rep[1]) > 1000 || Number(rep[3] || 0) > 1000)
        found.push(`${at}: a repetition past 1000 (RE2's limit)`);
    }
    if ((c === '+' || c === '*' || c === '?' || c === '}') && next === '+')
      found.push(`${at}: possessive quantifier`);
  }
  return found;
}

/** `re.search(pattern, sample)` for each sample: a string of 0 and 1, or the error compiling it. */
export function pythonVerdicts(patterns: string[], samples: string[]): (string | { error: string })[] {
  const script = `
import json, re, sys, warnings
warnings.simplefilter('error')
data = json.load(sys.stdin)
out = []
for p in data['patterns']:
    try:
        r = re.compile(p)
    except Exception as e:
        out.append({'error': type(e).__name__ + ': ' + str(e)})
        continue
    out.append(''.join('1' if r.search(s) else '0' for s in data['samples']))
json.dump(out, sys.stdout)
`;
  const stdout = execFileSync('python3', ['-c', script], {
    input: JSON.stringify({ patterns, samples }),
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  });
  return JSON.parse(stdout);
}

/** Whether a `java` launcher runs here (javaVerdicts needs one; Java 11+ runs a source file). */
export function javaAvailable(): boolean {
  return spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
}

// Each string as the hex of its UTF-16 units, one a line: lone surrogates and any control character
// reach Java as they are, with no JSON reader there.
const JAVA_SOURCE = `
import java.io.*;
import java.util.*;
import java.util.regex.*;
public class Verdicts {
  static String unhex(String h) {
    char[] c = new char[h.length() / 4];
    for (int i = 0; i < c.length; i++) c[i] = (char) Integer.parseInt(h.substring(4 * i, 4 * i + 4), 16);
    return new String(c);
  }
  public static void main(String[] a) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "US-ASCII"));
    int np = Integer.parseInt(in.readLine().trim());
    List<String> ps = new ArrayList<>();
    for (int i = 0; i < np; i++) ps.add(unhex(in.readLine().trim()));
    List<String> ss = new ArrayList<>();
    for (String l; (l = in.readLine()) != null;) ss.add(unhex(l.trim()));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
    for (String p : ps) {
      Pattern r;
      try { r = Pattern.compile(p); } catch (PatternSyntaxException e) {
        out.println("E" + e.getDescription().replace('\\n', ' '));
        continue;
      }
      StringBuilder b = new StringBuilder(ss.size());
      for (String s : ss) b.append(r.matcher(s).find() ? '1' : '0');
      out.println("V" + b);
    }
    out.flush();
  }
}
`;

const hexUnits = (s: string) => {
  let h = '';
  for (let i = 0; i < s.length; i++) h += s.charCodeAt(i).toString(16).padStart(4, '0');
  return h;
};

/** `Pattern.compile(p).matcher(sample).find()` in Java for each sample, as pythonVerdicts. */
export function javaVerdicts(patterns: string[], samples: string[]): (string | { error: string })[] {
  const dir = mkdtempSync(join(tmpdir(), 'regex-java-'));
  try {
    const file = join(dir, 'Verdicts.java');
    writeFileSync(file, JAVA_SOURCE);
    const input = [String(patterns.length), ...patterns.map(hexUnits), ...samples.map(hexUnits)].join('\n');
    const stdout = execFileSync('java', [file], { input, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' });
    const lines = stdout.split('\n').slice(0, patterns.length);
    if (lines.length !== patterns.length)
      throw new Error(`java answered ${lines.length} of ${patterns.length}`);
    return lines.map((l) => (l.startsWith('V') ? l.slice(1) : { error: `error: ${l.slice(1)}` }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `new RegExp(p, flags).test(sample)` for each sample, or the error compiling it. */
export function jsVerdicts(p: string, flags: '' | 'u', samples: string[]): string | { error: string } {
  let r: RegExp;
  try {
    r = new RegExp(p, flags);
  } catch (e) {
    return { error: String(e) };
  }
  return samples.map((s) => (r.test(s) ? '1' : '0')).join('');
}

/**
 * The one difference no ECMA-262 pattern avoids: Python's `$` (Java's and .NET's too) also matches
 * before a final line feed, and the only end anchors that do not (\Z, \z) are not ECMA-262. A pattern
 * ending in `$` is then looser there by exactly that: the sample is the JS-accepted text plus one \n.
 * Java's `$` matches before any final line terminator (`java`: \r\n, \r, \u0085, \u2028, \u2029 too).
 */
export function isFinalNewlineLeniency(
  p: string,
  sample: string,
  jsAccepts: (s: string) => boolean,
  engine: 'python' | 'java' = 'python',
): boolean {
  if (!p.endsWith('$') || jsAccepts(sample)) return false;
  const ending = engine === 'java' ? /(?:\r\n|[\n\r\u0085\u2028\u2029])$/.exec(sample) : /\n$/.exec(sample);
  return ending !== null && jsAccepts(sample.slice(0, -ending[0].length));
}
