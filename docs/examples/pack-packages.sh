# In the clone, after `npm ci` (which installs and builds every package): a .tgz per public package, each of them
# under packages/ (`npm pack --workspaces` would pack the private bench, docs and examples too).
mkdir -p ../accord-packages
npm pack --workspace packages --pack-destination ../accord-packages
