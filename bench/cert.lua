-- cert.lua - wrk script: POST /api/cert on a signed-in session.
-- Environment: VEP_COOKIE ("__Host-vep_session=..."), VEP_CSRF, VEP_PUBKEY
-- (the BrowserID public key JSON of a user key).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Cookie"] = os.getenv("VEP_COOKIE")
wrk.headers["X-CSRF-Token"] = os.getenv("VEP_CSRF")
wrk.body = '{"pubkey":' .. os.getenv("VEP_PUBKEY") .. ',"duration":3600}'

local bad = 0
function response(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end

function done(summary, latency, requests)
  io.write(string.format("non200 %d\n", summary.errors.status))
end
