-- The default GET /api/v1/jobs mix (jobs_queries.lua) asking for three fields of each job
-- (read by jobs_mix.lua with JL_QUERIES=jobs_queries_fields, and by ceiling.sh).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
package.path = here .. "?.lua;" .. package.path
local fields = {}
for i, path in ipairs(require("jobs_queries")) do
  local sep = path:find("?", 1, true) and "&" or "?"
  fields[i] = path .. sep .. "fields=id,role,company_name"
end
return fields
