-- A heavier GET /api/v1/jobs mix for a server started with `--search-memo 0` (read by
-- jobs_mix.lua with JL_QUERIES=jobs_queries_unseen, and by ceiling.sh): words with filters
-- and deep pages, each worked out as a search never asked before.
return {
  "/api/v1/jobs?q=engineer&remote_only=true&page=7",
  "/api/v1/jobs?q=senior%20engineer&domain=engineering,ai",
  "/api/v1/jobs?q=python&domain=data&min_confidence=0.7&page=3",
  "/api/v1/jobs?q=rust&seniority=senior,staff&page=2",
  "/api/v1/jobs?q=kubernetes&posted_after=2026-10-01&per_page=50",
  "/api/v1/jobs?domain=engineering&page=40",
  "/api/v1/jobs?remote_only=true&seniority=senior&page=25",
  "/api/v1/jobs?q=team%20product&domain=product,design&page=4",
  "/api/v1/jobs?q=data&min_confidence=0.9&per_page=50&page=6",
  "/api/v1/jobs?q=aws&remote_only=true&domain=devops,engineering",
  "/api/v1/jobs?seniority=mid,junior&posted_after=2026-09-01&page=30",
  "/api/v1/jobs?q=react%20typescript&page=3",
  "/api/v1/jobs?q=build&domain=ai&seniority=lead,staff,principal",
  "/api/v1/jobs?page=60&per_page=50",
  "/api/v1/jobs?q=customers%20platform&remote_only=true&page=2",
  "/api/v1/jobs?q=engineer&min_confidence=0.6&posted_after=2026-10-20&page=10",
}
