-- login.lua - wrk script: POST /api/login for the bench's slow account
-- (its PAM directory takes 1 s), so each connection keeps one sign-in in
-- flight.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"email":"slow@example.test","password":"slow-pw"}'

function done(summary, latency, requests)
  io.write(string.format("non200 %d\n", summary.errors.status))
end
