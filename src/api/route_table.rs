//! A table of an API's endpoints, declared once: each path with the operations its methods
//! call. The router, the `Allow` header, the metrics' route labels and the OpenAPI document's
//! paths are all read from it, so an endpoint added to a table is served, allowed, counted and
//! documented together.

use std::sync::OnceLock;

use http::Method;

use super::openapi::Doc;

/// A method an endpoint is declared with. `HEAD` and `OPTIONS` are answered for every path
/// and never declared: `HEAD` wherever `GET` is, as `GET` without the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verb {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Verb {
    /// The method's name, as HTTP writes it.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }

    /// The verb a request's method calls: `HEAD` calls `GET`; `None` for any method no
    /// endpoint is declared with.
    fn of(method: &Method) -> Option<Self> {
        Some(match *method {
            Method::GET | Method::HEAD => Verb::Get,
            Method::POST => Verb::Post,
            Method::PUT => Verb::Put,
            Method::PATCH => Verb::Patch,
            Method::DELETE => Verb::Delete,
            _ => return None,
        })
    }
}

/// Who may call an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Credential {
    /// Anyone: the documents that describe the API and the health probes.
    None,
    /// A client with an API key (the public API) or the operator with the admin token (the
    /// admin API).
    Required,
}

/// One operation: a method on a path, what it calls, and what the OpenAPI document says of
/// it.
#[derive(Debug)]
pub(crate) struct Endpoint<Op: 'static> {
    /// The handler it calls.
    pub(crate) op: Op,
    pub(crate) verb: Verb,
    pub(crate) doc: &'static Doc,
}

/// A path pattern (`{id}` stands for one segment), who may call it, and the endpoints of its
/// methods.
#[derive(Debug)]
pub(crate) struct Route<Op: 'static> {
    pub(crate) path: &'static str,
    /// Asked for before the method is looked at, so a caller without it learns nothing of
    /// the path's methods but from `OPTIONS`.
    pub(crate) credential: Credential,
    pub(crate) endpoints: &'static [Endpoint<Op>],
}

/// What a request's path matched: a route of the table, with its `{id}` segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Matched<'p> {
    /// The route's place in its table.
    pub(crate) index: usize,
    /// The path's `{id}` segment; empty when the pattern has none.
    pub(crate) id: &'p str,
}

/// What a request's method on a matched route calls.
#[derive(Debug)]
pub(crate) enum Called<Op: 'static> {
    /// `OPTIONS`: answered with the route's `Allow`.
    Options(&'static str),
    /// An endpoint.
    Endpoint(&'static Endpoint<Op>),
}

/// A method the route does not take; the route's `Allow`.
#[derive(Debug)]
pub(crate) struct NotAllowed(pub(crate) &'static str);

/// The routes of one API, with what is worked out from them once.
#[derive(Debug)]
pub(crate) struct RouteTable<Op: 'static> {
    routes: &'static [Route<Op>],
    derived: OnceLock<Derived>,
}

/// Per route: its pattern's segments and its `Allow` header.
#[derive(Debug)]
struct Derived {
    segments: Vec<Vec<&'static str>>,
    allow: Vec<String>,
}

const ID: &str = "{id}";

impl<Op: 'static> RouteTable<Op> {
    /// The table of `routes`.
    pub(crate) const fn new(routes: &'static [Route<Op>]) -> Self {
        Self {
            routes,
            derived: OnceLock::new(),
        }
    }

    fn derived(&self) -> &Derived {
        self.derived.get_or_init(|| Derived {
            segments: self
                .routes
                .iter()
                .map(|r| r.path.trim_start_matches('/').split('/').collect())
                .collect(),
            allow: self.routes.iter().map(allow_of).collect(),
        })
    }

    /// The route a path's segments (split at `/`, after the leading one) match. A literal
    /// segment wins over `{id}`: `/jobs/bulk` is the bulk upload, not the job `bulk`. An
    /// empty segment (a trailing slash, `//`) matches nothing, so it is never an empty id.
    pub(crate) fn find<'p>(&self, segments: &[&'p str]) -> Option<Matched<'p>> {
        if segments.contains(&"") {
            return None;
        }
        let mut best: Option<(usize, Matched<'p>)> = None;
        for (index, pattern) in self.derived().segments.iter().enumerate() {
            if pattern.len() != segments.len() {
                continue;
            }
            let mut id = "";
            let mut literals = 0;
            let matches = pattern.iter().zip(segments).all(|(want, got)| {
                if *want == ID {
                    id = got;
                    true
                } else {
                    literals += 1;
                    want == got
                }
            });
            if matches && best.as_ref().is_none_or(|(most, _)| literals > *most) {
                best = Some((literals, Matched { index, id }));
            }
        }
        best.map(|(_, matched)| matched)
    }

    /// What `method` calls on the route at `index`.
    pub(crate) fn call(
        &'static self,
        index: usize,
        method: &Method,
    ) -> Result<Called<Op>, NotAllowed> {
        let allow = self.allow(index);
        if method == Method::OPTIONS {
            return Ok(Called::Options(allow));
        }
        Verb::of(method)
            .and_then(|verb| self.routes[index].endpoints.iter().find(|e| e.verb == verb))
            .map(Called::Endpoint)
            .ok_or(NotAllowed(allow))
    }

    /// The `Allow` header of the route at `index`.
    pub(crate) fn allow(&'static self, index: usize) -> &'static str {
        &self.derived().allow[index]
    }

    /// The route at `index`.
    pub(crate) fn route(&self, index: usize) -> &'static Route<Op> {
        &self.routes[index]
    }

    /// Every route's pattern, joined for a message that lists them.
    pub(crate) fn paths(&self) -> String {
        let paths: Vec<&str> = self.routes.iter().map(|r| r.path).collect();
        paths.join(", ")
    }
}

/// A route's methods in declared order, `HEAD` after `GET`, and `OPTIONS` last.
fn allow_of<Op>(route: &Route<Op>) -> String {
    let mut methods: Vec<&str> = Vec::new();
    for endpoint in route.endpoints {
        methods.push(endpoint.verb.as_str());
        if endpoint.verb == Verb::Get {
            methods.push("HEAD");
        }
    }
    methods.push("OPTIONS");
    methods.join(", ")
}

/// A path's segments after its leading `/`, for [`RouteTable::find`].
pub(crate) fn split(path: &str) -> Option<Vec<&str>> {
    Some(path.strip_prefix('/')?.split('/').collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Op {
        One,
        Bulk,
        Put,
        List,
    }

    static TABLE: RouteTable<Op> = RouteTable::new(&[
        Route {
            path: "/v1/jobs",
            credential: Credential::Required,
            endpoints: &[Endpoint {
                op: Op::List,
                verb: Verb::Get,
                doc: &DOC,
            }],
        },
        Route {
            path: "/v1/jobs/{id}",
            credential: Credential::Required,
            endpoints: &[
                Endpoint {
                    op: Op::One,
                    verb: Verb::Get,
                    doc: &DOC,
                },
                Endpoint {
                    op: Op::Put,
                    verb: Verb::Put,
                    doc: &DOC,
                },
            ],
        },
        Route {
            path: "/v1/jobs/bulk",
            credential: Credential::None,
            endpoints: &[Endpoint {
                op: Op::Bulk,
                verb: Verb::Post,
                doc: &DOC,
            }],
        },
    ]);

    static DOC: Doc = Doc {
        id: "test",
        tag: "test",
        summary: "",
        description: "",
        params: &[],
        body: None,
        answers: &[],
        errors: &[],
    };

    fn op(path: &str, method: Method) -> Option<Op> {
        let matched = TABLE.find(&split(path)?)?;
        match TABLE.call(matched.index, &method).ok()? {
            Called::Endpoint(e) => Some(e.op),
            Called::Options(_) => None,
        }
    }

    #[test]
    fn a_literal_segment_wins_over_an_id_whichever_is_declared_first() {
        assert_eq!(op("/v1/jobs/bulk", Method::POST), Some(Op::Bulk));
        assert_eq!(op("/v1/jobs/42", Method::GET), Some(Op::One));
        assert_eq!(op("/v1/jobs/42", Method::HEAD), Some(Op::One));
        assert_eq!(op("/v1/jobs", Method::GET), Some(Op::List));
        let matched = TABLE.find(&["v1", "jobs", "42"]).map(|m| m.id);
        assert_eq!(matched, Some("42"));
    }

    #[test]
    fn empty_segments_and_other_lengths_match_nothing() {
        for path in ["/v1/jobs/", "/v1//jobs", "/v1", "/v1/jobs/1/2", "/"] {
            assert!(
                TABLE.find(&split(path).unwrap_or_default()).is_none(),
                "{path}"
            );
        }
    }

    #[test]
    fn allow_lists_the_declared_methods_with_head_and_options() {
        assert_eq!(TABLE.allow(0), "GET, HEAD, OPTIONS");
        assert_eq!(TABLE.allow(1), "GET, HEAD, PUT, OPTIONS");
        assert_eq!(TABLE.allow(2), "POST, OPTIONS");
        assert!(matches!(
            TABLE.call(2, &Method::GET),
            Err(NotAllowed("POST, OPTIONS"))
        ));
        assert!(matches!(
            TABLE.call(0, &Method::OPTIONS),
            Ok(Called::Options(_))
        ));
    }
}
