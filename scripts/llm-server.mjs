// A minimal OpenAI-compatible server over node-llama-cpp (prebuilt llama.cpp), for
// proving Cairn's LLM paths against a real model on a machine without one.
// Serves POST /v1/chat/completions (temperature, max_tokens, response_format json_schema /
// json_object via a grammar), POST /v1/embeddings (when started with --embeddings) and
// GET /v1/models. One request at a time (a single context sequence); others queue.
//
// usage: node llm-server.mjs --model FILE.gguf [--port 8088] [--name smollm2] [--ctx 4096] [--threads 2]
// (threads: set it to the cores you have; more threads than cores makes llama.cpp crawl)
import fs from "node:fs";
import http from "node:http";
import {getLlama, LlamaChatSession} from "node-llama-cpp";

const args = {};
for (let i = 2; i < process.argv.length; i++) {
    const a = process.argv[i];
    if (!a.startsWith("--")) continue;
    const next = process.argv[i + 1];
    args[a.slice(2)] = next === undefined || next.startsWith("--") ? "true" : (i++, next);
}
if (args.pidfile) fs.writeFileSync(args.pidfile, String(process.pid));
const port = Number(args.port ?? 8088);
const name = args.name ?? "local";
const llama = await getLlama({gpu: false});
const model = await llama.loadModel({modelPath: args.model});
const context = await model.createContext({contextSize: Number(args.ctx ?? 4096), threads: Number(args.threads ?? 2)});
const sequence = context.getSequence();
const embedder = args.embeddings !== undefined ? await model.createEmbeddingContext() : null;

let queue = Promise.resolve();
const serial = (fn) => (queue = queue.then(fn, fn));
const count = (text) => model.tokenize(String(text ?? "")).length;

async function chat(body) {
    const msgs = body.messages ?? [];
    const history = [];
    for (const m of msgs.slice(0, -1)) {
        if (m.role === "system") history.push({type: "system", text: String(m.content)});
        else if (m.role === "assistant") history.push({type: "model", response: [String(m.content)]});
        else history.push({type: "user", text: String(m.content)});
    }
    const last = msgs[msgs.length - 1] ?? {content: ""};
    const session = new LlamaChatSession({contextSequence: sequence, autoDisposeSequence: false});
    try {
        session.setChatHistory(history);
        const rf = body.response_format;
        let grammar;
        if (rf?.type === "json_schema" && rf.json_schema?.schema) grammar = await llama.createGrammarForJsonSchema(rf.json_schema.schema);
        else if (rf?.type === "json_object") grammar = await llama.getGrammarFor("json");
        const text = await session.prompt(String(last.content), {
            temperature: body.temperature ?? 0,
            maxTokens: body.max_tokens ?? 256,
            grammar,
        });
        const prompt_tokens = msgs.reduce((n, m) => n + count(m.content), 0);
        const completion_tokens = count(text);
        return {
            id: `chatcmpl-${Date.now()}`, object: "chat.completion", created: Math.floor(Date.now() / 1000), model: name,
            choices: [{index: 0, message: {role: "assistant", content: text}, finish_reason: "stop"}],
            usage: {prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens},
        };
    } finally {
        session.dispose({disposeSequence: false});
        await sequence.clearHistory();
    }
}

async function embeddings(body) {
    if (!embedder) throw Object.assign(new Error("started without --embeddings"), {status: 404});
    const input = Array.isArray(body.input) ? body.input : [body.input];
    const data = [];
    let tokens = 0;
    for (const [index, text] of input.entries()) {
        tokens += count(text);
        data.push({object: "embedding", index, embedding: Array.from((await embedder.getEmbeddingFor(String(text))).vector)});
    }
    return {object: "list", model: name, data, usage: {prompt_tokens: tokens, total_tokens: tokens}};
}

http.createServer((req, res) => {
    const reply = (status, obj) => {
        res.writeHead(status, {"content-type": "application/json"});
        res.end(JSON.stringify(obj));
    };
    if (req.method === "GET" && req.url === "/v1/models") return reply(200, {object: "list", data: [{id: name, object: "model"}]});
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
        const route = {"/v1/chat/completions": chat, "/v1/embeddings": embeddings}[req.url];
        if (req.method !== "POST" || !route) return reply(404, {error: {message: "not found"}});
        let body;
        try {
            body = JSON.parse(raw);
        } catch (e) {
            return reply(400, {error: {message: `bad json: ${e.message}`}});
        }
        serial(() => route(body)).then((out) => reply(200, out), (e) => reply(e.status ?? 500, {error: {message: String(e.message ?? e)}}));
    });
}).listen(port, "127.0.0.1", () => console.log(`llm-server: ${name} on http://127.0.0.1:${port}/v1`));
