export { compressedEncodings, loadApiReference } from "./load.js"
