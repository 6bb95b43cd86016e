/**
 * The guest-side prelude: JavaScript evaluated inside each fresh QuickJS context before the script.
 * It receives three host functions in a closure and defines only `getEntity`, `writeEntity` and
 * `console` as globals, so the script never holds a host function itself.
 * @internal
 * @module
 */

/** File name under which the prelude is evaluated (shows in guest stack traces). @internal */
export const PRELUDE_FILENAME = 'stepwire:prelude';

/**
 * Source of a function expression `(hostGet, hostWrite, hostLog, namesJson) => void`, where
 * `namesJson` is `{"i":[input names],"o":[output names]}`.
 *
 * - `hostGet(name)` returns the entity as JSON `{"c":[names],"n":rows,"v":[[column values]...]}`
 *   (column-major: one array per column, so parsing builds few arrays); rows are made here.
 * - `hostWrite(name, kind, json)` takes rows as one JSON string (`kind` 0: array of objects,
 *   1: `{"c":[names],"r":[[...]]}`) and returns an error message or `undefined`.
 * - `hostLog(level, line)` returns `false` once the log cap is reached.
 *
 * Built-ins are captured first, so a script that replaces `JSON` or `Array.prototype` only
 * breaks itself.
 * @internal
 */
export const PRELUDE_SOURCE = String.raw`(function (hostGet, hostWrite, hostLog, namesJson) {
  'use strict';
  var G = globalThis;
  var parse = JSON.parse, stringify = JSON.stringify, isArray = Array.isArray;
  var names = parse(namesJson), inputNames = names.i, outputNames = names.o;
  var defineProperty = Object.defineProperty, freeze = Object.freeze, create = Object.create;
  var StringCtor = String, ErrorCtor = Error, TypeErrorCtor = TypeError, FunctionCtor = Function;
  var inputSet = create(null), outputSet = create(null), makers = create(null), i;
  for (i = 0; i < inputNames.length; i++) inputSet[inputNames[i]] = true;
  for (i = 0; i < outputNames.length; i++) outputSet[outputNames[i]] = true;
  function list(names) { return names.length === 0 ? '(none)' : names.join(', '); }

  // Builds, once per column list, a function that turns column arrays into row objects
  // with a literal of constant keys (one shape for every row, no per-cell property lookup).
  function rowMaker(columns) {
    var key = stringify(columns);
    var made = makers[key];
    if (made !== undefined) return made;
    var locals = '', fields = '';
    for (var j = 0; j < columns.length; j++) {
      var quoted = stringify(StringCtor(columns[j]));
      locals += 'var c' + j + ' = v[' + j + '];';
      fields += (j ? ',' : '') + (columns[j] === '__proto__' ? '[' + quoted + ']' : quoted) + ': c' + j + '[i]';
    }
    made = FunctionCtor('v', 'n',
      '"use strict";' + locals + 'var out = new Array(n);for (var i = 0; i < n; i++) out[i] = {' + fields + '};return out;');
    makers[key] = made;
    return made;
  }

  function getEntity(name) {
    if (typeof name !== 'string' || inputSet[name] !== true) {
      throw new ErrorCtor('entity ' + StringCtor(name) + ' is not an input of this step; inputs: ' + list(inputNames));
    }
    var data = parse(hostGet(name));
    return rowMaker(data.c)(data.v, data.n);
  }

  function writeEntity(name, rows) {
    if (typeof name !== 'string' || outputSet[name] !== true) {
      throw new ErrorCtor('entity ' + StringCtor(name) + ' is not an output of this step; outputs: ' + list(outputNames));
    }
    var kind, json;
    if (isArray(rows)) {
      kind = 0;
      json = stringify(rows);
    } else if (rows !== null && typeof rows === 'object' && isArray(rows.columns) && isArray(rows.rows)) {
      var columnNames = [];
      for (var j = 0; j < rows.columns.length; j++) {
        var column = rows.columns[j];
        columnNames.push(typeof column === 'string' ? column : column !== null && typeof column === 'object' ? column.name : column);
      }
      kind = 1;
      json = stringify({ c: columnNames, r: rows.rows });
    } else {
      throw new TypeErrorCtor('writeEntity("' + name + '", rows): rows must be an array of objects or a data table {columns, rows}');
    }
    var problem = hostWrite(name, kind, json);
    if (problem !== undefined) throw new ErrorCtor(problem);
  }

  var logOpen = true;
  function format(value) {
    if (typeof value === 'string') return value;
    if (value instanceof ErrorCtor) return StringCtor(value.name) + ': ' + StringCtor(value.message);
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') return StringCtor(value);
    try {
      var text = stringify(value);
      return text === undefined ? StringCtor(value) : text;
    } catch (e) {
      return StringCtor(value);
    }
  }
  function logger(level) {
    return function () {
      if (!logOpen) return;
      var line = '';
      for (var j = 0; j < arguments.length; j++) line += (j ? ' ' : '') + format(arguments[j]);
      if (hostLog(level, line) === false) logOpen = false;
    };
  }
  var consoleObject = freeze({
    log: logger('log'), info: logger('info'), debug: logger('log'), warn: logger('warn'), error: logger('error'),
  });
  defineProperty(G, 'getEntity', { value: getEntity, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'writeEntity', { value: writeEntity, writable: false, enumerable: false, configurable: false });
  defineProperty(G, 'console', { value: consoleObject, writable: true, enumerable: false, configurable: true });
})`;
