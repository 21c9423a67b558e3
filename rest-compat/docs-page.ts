/**
 * GET /v1/docs: an interactive reference rendered in the browser from the OpenAPI document, with
 * a "try it" form per route. Plain HTML and JavaScript in one page: it loads nothing from the
 * internet (the response's Content-Security-Policy forbids it) and builds the DOM with
 * textContent only, so nothing in the document can inject markup.
 */
export function renderDocsPage(openapiUrl: string): string {
  return PAGE.replace('__OPENAPI_URL__', JSON.stringify(openapiUrl));
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<style>
  body { font: 14px/1.5 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { background: #1d2330; color: #fff; padding: 16px 24px; }
  header a { color: #9cc3ff; margin-right: 16px; }
  main { max-width: 1100px; margin: 0 auto; padding: 16px 24px 64px; }
  .auth { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 12px 16px; margin: 16px 0; display: flex; gap: 16px; flex-wrap: wrap; }
  .auth label { display: flex; flex-direction: column; font-size: 12px; color: #555; }
  input, textarea { font: 13px ui-monospace, monospace; padding: 4px 6px; border: 1px solid #c4cad3; border-radius: 4px; }
  input { min-width: 260px; }
  textarea { width: 100%; min-height: 110px; box-sizing: border-box; }
  h2 { margin: 28px 0 8px; text-transform: capitalize; }
  details.op { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; margin: 8px 0; }
  details.op > summary { cursor: pointer; padding: 8px 12px; display: flex; gap: 12px; align-items: center; }
  .method { font-weight: 700; width: 64px; text-align: center; border-radius: 4px; color: #fff; padding: 2px 0; font-size: 12px; }
  .GET { background: #2f7d32; } .POST { background: #1f5fbf; } .PUT { background: #a36a00; } .PATCH { background: #7b4bb3; } .DELETE { background: #b3261e; }
  .path { font-family: ui-monospace, monospace; }
  .summary { color: #555; }
  .body { padding: 4px 16px 16px; border-top: 1px solid #eef0f3; }
  table { border-collapse: collapse; width: 100%; margin: 8px 0; }
  th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eef0f3; vertical-align: top; }
  pre { background: #f1f3f6; padding: 8px; border-radius: 4px; overflow: auto; font-size: 12px; }
  button { background: #1f5fbf; color: #fff; border: 0; border-radius: 4px; padding: 6px 14px; cursor: pointer; }
  .status { font-weight: 700; }
  .muted { color: #777; font-size: 12px; }
</style>
</head>
<body>
<header><strong id="title">API reference</strong> <span id="version" class="muted"></span><br>
<a id="oas" href="#">OpenAPI document</a><a href="schema.graphql">GraphQL schema</a></header>
<main>
  <p id="description"></p>
  <div class="auth">
    <label>X-API-Key<input id="apiKey" autocomplete="off"></label>
    <label>Bearer token<input id="bearer" autocomplete="off"></label>
    <label>X-Workspace-ID<input id="workspace" autocomplete="off"></label>
  </div>
  <div id="ops">Loading…</div>
</main>
<script>
(function () {
  var OPENAPI_URL = __OPENAPI_URL__;
  var doc;
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') node.textContent = attrs[k];
      else if (k === 'class') node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function resolve(schema) {
    var seen = 0;
    while (schema && schema.$ref && seen++ < 20) {
      schema = schema.$ref.replace(/^#\\//, '').split('/').reduce(function (o, k) { return o && o[k]; }, doc);
    }
    return schema || {};
  }
  function example(schema, depth) {
    schema = resolve(schema);
    if (depth > 4) return null;
    if (schema.enum) return schema.enum[0];
    if (schema.type === 'array') return [example(schema.items, depth + 1)];
    if (schema.type === 'integer' || schema.type === 'number') return 0;
    if (schema.type === 'boolean') return false;
    if (schema.type === 'string') return schema.format === 'date-time' ? new Date(0).toISOString() : 'string';
    if (schema.properties) {
      var out = {};
      Object.keys(schema.properties).forEach(function (k) { out[k] = example(schema.properties[k], depth + 1); });
      return out;
    }
    return {};
  }
  function typeName(schema) {
    if (schema.$ref) return schema.$ref.split('/').pop();
    if (schema.type === 'array') return typeName(schema.items || {}) + '[]';
    if (schema.enum) return schema.enum.join(' | ');
    return schema.type || 'any';
  }
  function fieldTable(rows) {
    var table = el('table', {}, [el('tr', {}, [el('th', { text: 'Name' }), el('th', { text: 'In' }), el('th', { text: 'Type' }), el('th', { text: 'Required' }), el('th', { text: 'Description' })])]);
    rows.forEach(function (r) {
      table.appendChild(el('tr', {}, [el('td', { text: r.name }), el('td', { text: r.in }), el('td', { text: typeName(r.schema || {}) }), el('td', { text: r.required ? 'yes' : '' }), el('td', { text: r.description || '' })]));
    });
    return table;
  }
  function savedInput(id) {
    var input = document.getElementById(id);
    input.value = localStorage.getItem('docs.' + id) || '';
    input.addEventListener('change', function () { localStorage.setItem('docs.' + id, input.value); });
    return input;
  }
  var apiKey = savedInput('apiKey'), bearer = savedInput('bearer'), workspace = savedInput('workspace');

  function renderOperation(path, method, op) {
    var params = op.parameters || [];
    var bodySchema = op.requestBody && op.requestBody.content && op.requestBody.content['application/json'] && resolve(op.requestBody.content['application/json'].schema);
    var rows = params.slice();
    if (bodySchema && bodySchema.properties) {
      Object.keys(bodySchema.properties).forEach(function (name) {
        rows.push({ name: name, in: 'body', schema: bodySchema.properties[name], required: (bodySchema.required || []).indexOf(name) >= 0, description: bodySchema.properties[name].description });
      });
    }
    var inputs = {};
    var form = el('div', {}, []);
    params.forEach(function (p) {
      var input = el('input', { placeholder: p.name + (p.required ? ' (required)' : '') });
      inputs[p.name] = { param: p, input: input };
      form.appendChild(el('label', { class: 'muted' }, [p.in + ' ' + p.name + ' ', input]));
      form.appendChild(el('br'));
    });
    var bodyInput = null;
    if (bodySchema) {
      bodyInput = el('textarea', {});
      bodyInput.value = JSON.stringify(example(bodySchema, 0), null, 2);
      form.appendChild(el('div', { class: 'muted', text: 'JSON body' }));
      form.appendChild(bodyInput);
    }
    var result = el('div', {});
    var button = el('button', { text: 'Send' });
    button.addEventListener('click', function () {
      var url = path, query = [];
      Object.keys(inputs).forEach(function (name) {
        var p = inputs[name].param, v = inputs[name].input.value;
        if (p.in === 'path') url = url.replace('{' + name + '}', encodeURIComponent(v));
        else if (v !== '') query.push(encodeURIComponent(name) + '=' + encodeURIComponent(v));
      });
      var base = (doc.servers && doc.servers[0] && doc.servers[0].url) || '';
      var headers = {};
      if (apiKey.value) headers['X-API-Key'] = apiKey.value;
      if (bearer.value) headers['Authorization'] = 'Bearer ' + bearer.value;
      if (workspace.value) headers['X-Workspace-ID'] = workspace.value;
      var init = { method: method.toUpperCase(), headers: headers };
      if (bodyInput) { headers['Content-Type'] = 'application/json'; init.body = bodyInput.value; }
      result.textContent = 'Sending…';
      var started = performance.now();
      fetch(base + url + (query.length ? '?' + query.join('&') : ''), init).then(function (res) {
        return res.text().then(function (text) {
          var pretty = text;
          try { pretty = JSON.stringify(JSON.parse(text), null, 2); } catch (e) {}
          result.textContent = '';
          result.appendChild(el('div', {}, [el('span', { class: 'status', text: res.status + ' ' + res.statusText }), el('span', { class: 'muted', text: '  ' + Math.round(performance.now() - started) + ' ms, x-request-id ' + (res.headers.get('x-request-id') || '') })]));
          result.appendChild(el('pre', { text: pretty }));
        });
      }, function (err) { result.textContent = 'Request failed: ' + err; });
    });
    var responses = el('table', {}, [el('tr', {}, [el('th', { text: 'Status' }), el('th', { text: 'Description' }), el('th', { text: 'Body' })])]);
    Object.keys(op.responses || {}).forEach(function (status) {
      var r = resolve(op.responses[status]);
      var schema = r.content && r.content['application/json'] && r.content['application/json'].schema;
      responses.appendChild(el('tr', {}, [el('td', { text: status }), el('td', { text: r.description || '' }), el('td', { text: schema ? typeName(schema) : '' })]));
    });
    var okStatus = Object.keys(op.responses || {})[0];
    var okSchema = okStatus && op.responses[okStatus].content && op.responses[okStatus].content['application/json'].schema;
    return el('details', { class: 'op' }, [
      el('summary', {}, [el('span', { class: 'method ' + method.toUpperCase(), text: method.toUpperCase() }), el('span', { class: 'path', text: path }), el('span', { class: 'summary', text: op.summary || op.description || '' }), op.security && op.security.length === 0 ? el('span', { class: 'muted', text: 'public' }) : null]),
      el('div', { class: 'body' }, [
        op.description ? el('p', { text: op.description }) : null,
        rows.length ? fieldTable(rows) : el('p', { class: 'muted', text: 'No parameters.' }),
        el('div', { class: 'muted', text: 'Response example' }),
        el('pre', { text: okSchema ? JSON.stringify(example(okSchema, 0), null, 2) : '' }),
        responses,
        el('h4', { text: 'Try it' }), form, button, result,
      ]),
    ]);
  }

  fetch(OPENAPI_URL).then(function (r) { return r.json(); }).then(function (d) {
    doc = d;
    document.getElementById('title').textContent = doc.info.title;
    document.getElementById('version').textContent = 'v' + doc.info.version;
    document.getElementById('description').textContent = doc.info.description || '';
    document.getElementById('oas').setAttribute('href', OPENAPI_URL);
    var byTag = {};
    Object.keys(doc.paths).forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        var op = doc.paths[path][method];
        var tag = (op.tags && op.tags[0]) || 'other';
        (byTag[tag] = byTag[tag] || []).push(renderOperation(path, method, op));
      });
    });
    var ops = document.getElementById('ops');
    ops.textContent = '';
    Object.keys(byTag).forEach(function (tag) {
      ops.appendChild(el('h2', { text: tag }));
      byTag[tag].forEach(function (node) { ops.appendChild(node); });
    });
  }, function (err) { document.getElementById('ops').textContent = 'Could not load ' + OPENAPI_URL + ': ' + err; });
})();
</script>
</body>
</html>
`;
