-- The GET /api/v1/jobs query mix, shared by jobs_mix.lua and jobs_mix_keys.lua (and read by
-- ceiling.sh to measure the answers' sizes): ten realistic searches, one per request in turn.
return {
  "/api/v1/jobs",
  "/api/v1/jobs?q=rust",
  "/api/v1/jobs?domain=engineering,ai&remote_only=true",
  "/api/v1/jobs?seniority=senior,staff&min_confidence=0.8",
  "/api/v1/jobs?q=python&domain=data",
  "/api/v1/jobs?company=nimbus",
  "/api/v1/jobs?posted_after=2026-10-15&per_page=50",
  "/api/v1/jobs?domain=design&page=3",
  "/api/v1/jobs?q=kubernetes%20aws&seniority=lead",
  "/api/v1/jobs?remote_only=true&page=20",
}
