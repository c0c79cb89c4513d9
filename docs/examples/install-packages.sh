# In your project, beside the clone: the install scripts npm asks a project to decide on (node's picks its platform's
# binary when you install Node 24 from npm, below; @scarf/scarf's, under the API reference's swagger-ui-dist, only
# reports a download), then effect at the very version the packages pin (--save-exact, so that the host and Accord
# share one copy of it), then the tarballs.
npm pkg set allowScripts.node=true 'allowScripts.@scarf/scarf=false' --json
npm install --save-exact effect@4.1.0
npm install ../accord-packages/*.tgz
