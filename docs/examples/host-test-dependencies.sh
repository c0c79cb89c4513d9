# In your project: the test runner and Effect's helper for it, at the versions Accord's own tests run (@effect/vitest
# 4.0.5 takes vitest 5 only, >=5.0.0 <6.0.0, so name the version: a plain `npm install vitest` may pick another).
npm install --save-dev --save-exact vitest@5.1.1 @effect/vitest@4.0.5
