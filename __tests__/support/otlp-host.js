// A host process for the OTLP/HTTP export test (__tests__/integration/tracing.test.ts): registers
// the OpenTelemetry Node SDK with the OTLP/HTTP exporter pointed at OTLP_URL, serves the built
// gateway (dist/) with tracing on, sends itself one request with TRACEPARENT, flushes the spans
// and exits. A process of its own because the exporter loads `http` with a dynamic import, which
// jest's module sandbox does not run.
'use strict';
const http = require('node:http');
const path = require('node:path');
const express = require('express');
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
const { SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { createGateway } = require(path.resolve(__dirname, '../../dist/cjs'));

async function main() {
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: process.env.OTLP_URL }))] });
  provider.register();
  const gateway = createGateway({ databaseUrl: process.env.DATABASE_URL, jwtSecret: process.env.JWT_SECRET, tracing: true });
  await gateway.ready;
  const server = http.createServer(express().use('/api', gateway));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const status = await new Promise((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port: server.address().port, path: '/api/orders?limit=1', headers: { Authorization: `Bearer ${process.env.TOKEN}`, traceparent: process.env.TRACEPARENT } },
      (res) => res.resume().on('end', () => resolve(res.statusCode)),
    );
    req.on('error', reject);
  });
  await provider.forceFlush();
  await provider.shutdown();
  server.close();
  await gateway.close();
  process.stdout.write(`${JSON.stringify({ status })}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
