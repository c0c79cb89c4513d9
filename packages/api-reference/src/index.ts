export { loadApiReference } from "./load.js"
