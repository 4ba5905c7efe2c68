// hello, in Node's standard library only: knit builds this directory's
// Dockerfile with BuildKit from the pushed commit and serves it.
const http = require("http");

const target = process.env.TARGET || "World";
http
  .createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
    res.end(`Hello ${target} from Node!\n`);
  })
  .listen(Number(process.env.PORT || 8080));
