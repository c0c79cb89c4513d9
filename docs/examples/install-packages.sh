# In your project, beside the clone: effect at the very version the packages pin (--save-exact, so that the host and
# Accord share one copy of it), then the tarballs.
npm install --save-exact effect@4.1.0
npm install ../accord-packages/*.tgz
