-- A GET /api/v1/jobs mix in relevance order (read by jobs_mix.lua with
-- JL_QUERIES=jobs_queries_relevance, and by ceiling.sh): the words of the default mix and a few
-- more, best BM25 match first, some with filters.
return {
  "/api/v1/jobs?q=rust&sort=relevance",
  "/api/v1/jobs?q=senior%20engineer&sort=relevance",
  "/api/v1/jobs?q=python&domain=data&sort=relevance",
  "/api/v1/jobs?q=kubernetes%20aws&seniority=lead&sort=relevance",
  "/api/v1/jobs?q=remote&sort=relevance&per_page=50",
  "/api/v1/jobs?q=machine%20learning&sort=relevance",
  "/api/v1/jobs?q=react%20typescript&remote_only=true&sort=relevance",
  "/api/v1/jobs?q=engineer&sort=relevance&page=5",
  "/api/v1/jobs?q=postgres&country=DE,US&sort=relevance",
  "/api/v1/jobs?q=design&sort=relevance&highlight=true",
}
