# From the repository root: build once, then run the built server on the Koa adapter with seed.json's users, tokens
# and payment methods (its demo tokens are public: a first run only; --auth jwt for your identity provider's tokens).
npm run build
exec node packages/server/bin/accord.js --adapter koa --seed seed.json --port "${PORT:-3000}"
