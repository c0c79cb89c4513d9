/** docs/api.md, "Authentication": 1 to 512 characters of `[A-Za-z0-9._~+/-]`, then any number of `=`. */
export const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]{1,512}=*$/

export const isWellFormedToken = (token: string): boolean => TOKEN_PATTERN.test(token)
