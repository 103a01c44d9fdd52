/**
 * The script every QuickJS context evaluates before the program: a function that takes the
 * worker's host functions, installs `tools`, `console`, `setTimeout`/`clearTimeout`, the replayable
 * `Date` and `Math.random`, and returns `start(program)`. It captures what it uses (JSON, the
 * host functions) before the program runs, so a program that replaces globals only breaks itself.
 * Everything it hands the host is a string or a number.
 *
 * Host functions (`h`): call(name, argsJson) → promise of a settlement's JSON; log(level, text);
 * now(); random(); sleep(ms) → promise; done(kind, text); fail(code, message) stops the run.
 */
export const PRELUDE = String.raw`(function (h, toolNamesJson, outputBytes) {
  'use strict';
  const stringify = JSON.stringify, parse = JSON.parse, RealDate = Date;
  const call = h.call, log = h.log, now = h.now, random = h.random, sleep = h.sleep, done = h.done, fail = h.fail;
  const define = (target, key, value) => Object.defineProperty(target, key, { value, writable: false, enumerable: true, configurable: false });

  // A host function that returns undefined has stopped the run: throw, the interrupt handler ends it.
  function stopping() {
    throw new Error('the run is stopping');
  }
  function toolCallError(code, message) {
    const error = new Error(message);
    error.code = code;
    return error;
  }
  async function invoke(name, args) {
    if (typeof name !== 'string') throw new TypeError('tools.call: the tool name must be a string');
    let text;
    try {
      text = args === undefined ? '{}' : stringify(args);
    } catch (error) {
      throw new TypeError('the arguments of ' + name + ' are not JSON: ' + (error && error.message));
    }
    if (text === undefined) throw new TypeError('the arguments of ' + name + ' are not JSON');
    if (text.length > outputBytes) {
      fail('CODE_OUTPUT_LIMIT', 'the arguments of ' + name + ' exceed ' + outputBytes + ' bytes');
      stopping();
    }
    const pending = call(name, text);
    if (pending === undefined) stopping();
    const settled = parse(await pending);
    if (settled.ok) return settled.value;
    throw toolCallError(settled.code, settled.message);
  }
  const tools = Object.create(null);
  for (const name of parse(toolNamesJson)) {
    if (name !== 'call') define(tools, name, (args) => invoke(name, args));
  }
  define(tools, 'call', (name, args) => invoke(name, args));
  Object.defineProperty(globalThis, 'tools', { value: Object.freeze(tools), writable: false, enumerable: false, configurable: false });

  function show(value) {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return (value.name || 'Error') + ': ' + value.message;
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch {
      return String(value);
    }
  }
  const consoleObject = {};
  for (const level of ['log', 'info', 'warn', 'error']) {
    consoleObject[level] = (...values) => {
      let text = '';
      for (let i = 0; i < values.length; i++) text += (i === 0 ? '' : ' ') + show(values[i]);
      if (log(level, text) === false) stopping();
    };
  }
  consoleObject.debug = consoleObject.log;
  globalThis.console = consoleObject;

  const timers = new Map();
  let nextTimer = 1;
  globalThis.setTimeout = (fn, ms, ...args) => {
    if (typeof fn !== 'function') throw new TypeError('setTimeout: the callback must be a function');
    if (timers.size >= 1000) throw new RangeError('setTimeout: more than 1000 timers pending');
    const id = nextTimer++;
    timers.set(id, true);
    sleep(Math.max(0, Number(ms) || 0)).then(() => {
      if (!timers.delete(id)) return;
      try {
        fn(...args);
      } catch (error) {
        log('error', 'uncaught in a setTimeout callback: ' + show(error));
      }
    });
    return id;
  };
  globalThis.clearTimeout = (id) => { timers.delete(id); };

  function SandboxDate(...args) {
    if (!new.target) return new RealDate(now()).toString();
    return args.length === 0 ? new RealDate(now()) : new RealDate(...args);
  }
  SandboxDate.prototype = RealDate.prototype;
  define(SandboxDate, 'now', () => now());
  define(SandboxDate, 'parse', RealDate.parse);
  define(SandboxDate, 'UTC', RealDate.UTC);
  Object.defineProperty(RealDate.prototype, 'constructor', { value: SandboxDate, writable: true, configurable: true });
  globalThis.Date = SandboxDate;
  Math.random = () => random();

  function describe(error) {
    if (error instanceof Error) {
      const name = String(error.name || 'Error');
      // Only the program's own frames: the prelude's are no business of the model's.
      const frames = String(error.stack || '').split('\n').filter((line) => line.includes('program.js')).slice(0, 10);
      return name + ': ' + String(error.message) + (frames.length > 0 ? '\n' + frames.join('\n') : '');
    }
    // QuickJS throws null when it cannot even allocate its out-of-memory error.
    if (error === null) return 'InternalError: out of memory (null was thrown)';
    return 'a non-Error value was thrown: ' + show(error);
  }
  return function start(program) {
    let promise;
    try {
      promise = program();
    } catch (error) {
      done('threw', describe(error));
      return;
    }
    promise.then(
      (value) => {
        let text;
        try {
          text = value === undefined ? undefined : stringify(value);
        } catch (error) {
          done('threw', 'the value returned is not JSON: ' + describe(error));
          return;
        }
        if (text !== undefined && text.length > outputBytes) {
          done('too-large', '');
          return;
        }
        done('value', text === undefined ? '' : 'v' + text);
      },
      (error) => done('threw', describe(error)),
    );
  };
})`
