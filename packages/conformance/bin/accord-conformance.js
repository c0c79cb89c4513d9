#!/usr/bin/env node
// A committed entry point, so that npm links the command at install time, before `prepare` has built dist/.
import "../dist/cli.js"
