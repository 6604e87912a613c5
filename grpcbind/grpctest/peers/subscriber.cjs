// An AAEP subscriber over gRPC written with Node's @grpc/grpc-js and
// @grpc/proto-loader, for interop tests (run with NODE_PATH at the npm
// packages).
//
// usage: node subscriber.cjs PROTO_DIR ADDR   (ADDR: HOST:PORT or grpc://HOST:PORT)
//
// Same protocol and output as subscriber.py: sends a subscription.request,
// answers each awaiting.confirmation with a confirmation.reply on the
// stream, prints "MANIFEST <hex>", "RECV <message_type> <hex>" per message
// and "END <status name>". The decision is "accept", unless
// AAEP_TEST_DECISIONS (set by aaep-replay test --exec) scripts one for the
// token: its decision, after its delay.
'use strict';
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const protoDir = process.argv[2];
const addr = process.argv[3].replace(/^grpc:\/\//, '');
const decisions = {};
for (const d of JSON.parse(process.env.AAEP_TEST_DECISIONS || '[]')) {
  decisions[d.token] = d;
}
const def = protoLoader.loadSync(path.join(protoDir, 'aaep/v1/aaep.proto'), { keepCase: true, includeDirs: [protoDir] });
const aaep = grpc.loadPackageDefinition(def).aaep.v1;
const client = new aaep.AaepService(addr, grpc.credentials.createInsecure(), {
  'grpc.max_receive_message_length': 64 << 20,
});

const statusName = (code) => Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);

client.GetManifest({}, { deadline: Date.now() + 10000 }, (err, m) => {
  if (err) {
    console.log('END ' + statusName(err.code));
    process.exit(1);
  }
  console.log('MANIFEST ' + Buffer.from(m.json).toString('hex'));
  const call = client.Subscribe({ deadline: Date.now() + 60000 });
  let subscriptionId = '';
  call.write({
    json: Buffer.from(JSON.stringify({
      type: 'subscription.request', aaep_version: '1.0.0',
      subscriber_id: 'node-grpc-js', subscriber_name: 'node-grpc-js',
      capabilities: { supports_confirmation_reply: true, supports_clarification_reply: true },
    })),
    message_type: 'subscription.request',
  });
  call.on('data', (msg) => {
    const body = Buffer.from(msg.json);
    console.log('RECV ' + (msg.message_type || '-') + ' ' + body.toString('hex'));
    const ev = JSON.parse(body.toString('utf8'));
    if (ev.type === 'subscription.accepted') subscriptionId = ev.subscription_id;
    if (typeof ev.type === 'string' && ev.type.endsWith('awaiting.confirmation')) {
      const d = decisions[ev.reply_token] || { decision: 'accept', delay_ns: 0 };
      const reply = { type: 'confirmation.reply', reply_token: ev.reply_token, decision: d.decision, subscription_id: subscriptionId, timestamp: new Date().toISOString() };
      const send = () => call.write({ json: Buffer.from(JSON.stringify(reply)), message_type: 'confirmation.reply' });
      if (d.delay_ns) setTimeout(send, d.delay_ns / 1e6);
      else send();
    }
  });
  call.on('error', (err) => {
    console.log('END ' + statusName(err.code));
    process.exit(0);
  });
  call.on('end', () => {
    console.log('END OK');
    call.end();
    process.exit(0);
  });
});
