# In the clone, after `npm ci` (which installs and builds every package): a .tgz per public package, each of them
# under packages/ (`npm pack --workspaces` would pack the private bench, docs and examples too), but the private test
# machinery, which npm packs all the same.
mkdir -p ../accord-packages
npm pack --workspace packages --pack-destination ../accord-packages
rm ../accord-packages/accord-test-support-*.tgz
