# From the repository root. JWT_SECRET comes from your secret store: at least 32 random bytes.
export JWT_SECRET="${JWT_SECRET:?set JWT_SECRET}"
export JWT_ISSUER=https://login.example.com/ JWT_AUDIENCE=accord-api
npx tsc -b packages/server
exec node packages/server/dist/main.js --adapter koa --auth jwt --seed seed.json --port "${PORT:-3000}"
