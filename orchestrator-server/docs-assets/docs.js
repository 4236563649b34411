// The API reference page: fetches the generated OpenAPI document from this
// server and draws every operation and schema. No dependencies, nothing
// fetched from elsewhere.

const METHODS = ["get", "post", "put", "patch", "delete"];

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// A schema as compact text: `$ref`s name their component (linked below),
// objects list their properties with `?` for optional ones.
function describe(schema, depth = 0) {
  if (!schema || typeof schema !== "object") return "any";
  if (schema.$ref) return schema.$ref.split("/").pop();
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (schema[key]) return schema[key].map((s) => describe(s, depth)).join(key === "allOf" ? " & " : " | ");
  }
  const types = [].concat(schema.type || []);
  if (types.includes("array")) return `[${describe(schema.items, depth)}]`;
  if (types.includes("object") || schema.properties) {
    if (depth > 3) return "{…}";
    const required = new Set(schema.required || []);
    const pad = "  ".repeat(depth + 1);
    const fields = Object.entries(schema.properties || {}).map(
      ([name, s]) => `${pad}${name}${required.has(name) ? "" : "?"}: ${describe(s, depth + 1)}`,
    );
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      fields.push(`${pad}[key]: ${describe(schema.additionalProperties, depth + 1)}`);
    }
    const closed = schema.additionalProperties === false ? " (no other fields)" : "";
    return fields.length ? `{\n${fields.join(",\n")}\n${"  ".repeat(depth)}}${closed}` : `object${closed}`;
  }
  const format = schema.format ? ` (${schema.format})` : "";
  return (types.filter((t) => t !== "null").join(" | ") || "any") + format + (types.includes("null") ? " | null" : "");
}

function anchor(method, path) {
  return `op-${method}-${path.replace(/[^a-zA-Z0-9]+/g, "-")}`;
}

function content(body) {
  if (!body || !body.content) return null;
  const list = el("div");
  for (const [type, media] of Object.entries(body.content)) {
    list.append(el("div", {}, el("code", {}, type)));
    if (media.schema) list.append(el("pre", {}, describe(media.schema)));
    if (media["x-event-data"]) list.append(el("div", {}, "each frame's data: "), el("pre", {}, describe(media["x-event-data"])));
  }
  return list;
}

function operation(path, method, op) {
  const section = el("section", { class: "op" + (op["x-undocumented"] ? " undocumented" : ""), id: anchor(method, path) });
  section.dataset.search = `${method} ${path} ${op.summary || ""} ${(op.tags || []).join(" ")}`.toLowerCase();
  section.append(el("div", {}, el("span", { class: `method m-${method}` }, method), " ", el("span", { class: "path" }, path)));
  section.append(el("div", {}, op.summary || ""));
  const scope = op["x-scope"] ? `scope: ${op["x-scope"]} or higher` : "no credential needed";
  section.append(
    el("div", { class: "meta" },
      el("span", {}, scope),
      el("span", {}, `body limit: ${op["x-body-limit"]} bytes`),
      el("span", {}, op["x-rate-limited"] ? "rate limited" : "not rate limited"),
      el("span", {}, `operationId: ${op.operationId}`)),
  );
  if (op["x-websocket-upgrade"]) {
    section.append(el("div", { class: "meta" }, `websocket upgrade (scope ${op["x-websocket-upgrade"].scope}): ${op["x-websocket-upgrade"].description}`));
  }
  if (op.parameters && op.parameters.length) {
    const rows = op.parameters.map((p) =>
      el("tr", {}, el("td", {}, el("code", {}, p.name)), el("td", {}, p.in), el("td", {}, p.required ? "required" : ""),
        el("td", {}, el("code", {}, describe(p.schema))), el("td", {}, p.description || "")));
    section.append(el("h3", {}, "Parameters"), el("table", {}, el("tbody", {}, ...rows)));
  }
  if (op.requestBody) {
    section.append(el("h3", {}, `Request body${op.requestBody.required ? "" : " (optional)"}`), content(op.requestBody));
  }
  const responses = el("div");
  for (const [status, response] of Object.entries(op.responses || {})) {
    const item = el("details", {}, el("summary", {}, `${status} ${response.description || ""}`));
    const body = content(response);
    if (body) item.append(body);
    responses.append(item);
  }
  section.append(el("h3", {}, "Responses"), responses);
  return section;
}

async function main() {
  const status = document.getElementById("status");
  let doc;
  try {
    const response = await fetch("/api/v1/openapi.json");
    doc = await response.json();
  } catch (error) {
    status.textContent = `Could not load the document: ${error}`;
    return;
  }
  status.remove();
  const main = document.getElementById("content");
  const toc = document.getElementById("toc");
  main.append(el("p", {}, `${doc.info.title} ${doc.info.version} (OpenAPI ${doc.openapi}). ${doc.info.description}`));
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = (op.tags && op.tags[0]) || "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push([path, method, op]);
    }
  }
  for (const tag of [...byTag.keys()].sort()) {
    toc.append(el("h2", {}, tag));
    main.append(el("h2", {}, tag));
    for (const [path, method, op] of byTag.get(tag)) {
      toc.append(el("a", { href: `#${anchor(method, path)}` }, `${method.toUpperCase()} ${path}`));
      main.append(operation(path, method, op));
    }
  }
  main.append(el("h2", { id: "schemas" }, "Schemas"));
  toc.append(el("h2", {}, el("a", { href: "#schemas" }, "schemas")));
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    const section = el("section", { class: "op", id: `schema-${name}` });
    section.dataset.search = name.toLowerCase();
    section.append(el("div", { class: "path" }, name));
    if (schema.description) section.append(el("div", {}, schema.description));
    section.append(el("pre", {}, describe(schema)));
    main.append(section);
  }
  document.getElementById("filter").addEventListener("input", (event) => {
    const needle = event.target.value.toLowerCase();
    for (const section of main.querySelectorAll("section")) {
      section.hidden = needle !== "" && !section.dataset.search.includes(needle);
    }
  });
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
}

main();
