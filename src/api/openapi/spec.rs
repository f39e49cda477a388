//! What an endpoint declares for the OpenAPI document beside its method and path: its
//! parameters, its body, its answers and the errors it can give.

use serde_json::Value;

/// An operation's part of the document.
#[derive(Debug)]
pub(crate) struct Doc {
    /// The `operationId`, also the name clients generated from the document give the call.
    pub(crate) id: &'static str,
    pub(crate) tag: &'static str,
    pub(crate) summary: &'static str,
    pub(crate) description: &'static str,
    pub(crate) params: &'static [&'static Param],
    pub(crate) body: Option<RequestBody>,
    /// Its successful answers.
    pub(crate) answers: &'static [Answer],
    /// The statuses of its other answers, each a response of the document's components.
    pub(crate) errors: &'static [u16],
}

impl Doc {
    /// How many of its parameters are in the query, or of those only the lists.
    pub(crate) const fn query_count(&self, lists_only: bool) -> usize {
        let (mut i, mut n) = (0, 0);
        while i < self.params.len() {
            n += self.params[i].in_query(lists_only) as usize;
            i += 1;
        }
        n
    }

    /// The names of its parameters in the query, or of those only the lists, in order; `N`
    /// is their [`Doc::query_count`].
    pub(crate) const fn query_names<const N: usize>(&self, lists_only: bool) -> [&'static str; N] {
        let mut names = [""; N];
        let (mut i, mut n) = (0, 0);
        while i < self.params.len() {
            if self.params[i].in_query(lists_only) {
                names[n] = self.params[i].name;
                n += 1;
            }
            i += 1;
        }
        assert!(n == N, "N must be the number of query parameters");
        names
    }
}

/// `N` parameters: those of `first`, then those of `then`.
pub(crate) const fn params_of<const N: usize>(
    first: &[&'static Param],
    then: &[&'static Param],
) -> [&'static Param; N] {
    assert!(
        first.len() + then.len() == N,
        "N must be the number of parameters"
    );
    let mut all = [first[0]; N];
    let mut i = 0;
    while i < N {
        all[i] = if i < first.len() {
            first[i]
        } else {
            then[i - first.len()]
        };
        i += 1;
    }
    all
}

/// Where a parameter is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum In {
    Query,
    Header,
    Path,
}

impl In {
    fn as_str(self) -> &'static str {
        match self {
            In::Query => "query",
            In::Header => "header",
            In::Path => "path",
        }
    }
}

/// How a parameter is written in a query string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// No style said.
    Plain,
    /// Said to be `style: form`, `explode: true`: once, as `name=value`.
    Exploded,
    /// A comma list that may also be repeated (`name=a,b&name=c`), said as `Exploded`.
    List,
}

/// A parameter, declared once for every operation that takes it.
#[derive(Debug)]
pub(crate) struct Param {
    /// Its name among the document's reusable parameters, when operations refer to it there.
    pub(crate) component: Option<&'static str>,
    pub(crate) name: &'static str,
    pub(crate) at: In,
    pub(crate) required: bool,
    pub(crate) description: &'static str,
    /// One line for a model: what an MCP tool's schema says of it (`x-brief` in the
    /// document), with no advice for REST alone.
    pub(crate) brief: &'static str,
    pub(crate) schema: fn() -> Value,
    /// How it is written in a query string.
    pub(crate) form: Form,
    pub(crate) example: Option<&'static str>,
    /// Named examples: name and value.
    pub(crate) examples: &'static [(&'static str, &'static str)],
}

impl Param {
    /// It is in the query, and a list if `lists_only`.
    const fn in_query(&self, lists_only: bool) -> bool {
        matches!(self.at, In::Query) && (!lists_only || matches!(self.form, Form::List))
    }

    /// The parameter object.
    pub(crate) fn object(&self) -> Value {
        let mut object = serde_json::Map::new();
        object.insert("name".into(), self.name.into());
        object.insert("in".into(), self.at.as_str().into());
        object.insert("required".into(), self.required.into());
        object.insert("description".into(), self.description.into());
        object.insert("x-brief".into(), self.brief.into());
        if self.form != Form::Plain {
            object.insert("style".into(), "form".into());
            object.insert("explode".into(), true.into());
        }
        object.insert("schema".into(), (self.schema)());
        if let Some(example) = self.example {
            object.insert("example".into(), example.into());
        }
        if !self.examples.is_empty() {
            let examples: serde_json::Map<String, Value> = self
                .examples
                .iter()
                .map(|(name, value)| ((*name).to_owned(), serde_json::json!({ "value": value })))
                .collect();
            object.insert("examples".into(), examples.into());
        }
        Value::Object(object)
    }

    /// The parameter as an operation lists it: a reference to the components, or itself.
    pub(crate) fn listed(&self) -> Value {
        match self.component {
            Some(name) => reference("parameters", name),
            None => self.object(),
        }
    }
}

/// What a body or an answer holds.
#[derive(Debug)]
pub(crate) enum Content {
    /// Nothing.
    None,
    /// JSON of a component schema.
    Schema(&'static str),
    /// JSON of a schema of its own.
    Inline(fn() -> Value),
    /// Another media type than JSON, with its schema.
    Media(&'static str, &'static Content),
}

impl Content {
    /// The `content` object for these media types; `None` for no content.
    fn object(&self, media: &[&str]) -> Option<Value> {
        let (media, schema): (Vec<&str>, Value) = match self {
            Content::None => return None,
            Content::Schema(name) => (media.to_vec(), reference("schemas", name)),
            Content::Inline(schema) => (media.to_vec(), schema()),
            Content::Media(media, inner) => return inner.object(&[media]),
        };
        let content: serde_json::Map<String, Value> = media
            .into_iter()
            .map(|m| (m.to_owned(), serde_json::json!({ "schema": schema })))
            .collect();
        Some(content.into())
    }
}

/// An operation's request body.
#[derive(Debug)]
pub(crate) struct RequestBody {
    pub(crate) required: bool,
    pub(crate) description: &'static str,
    /// The media types it may be sent as.
    pub(crate) media: &'static [&'static str],
    pub(crate) content: Content,
}

impl RequestBody {
    pub(crate) fn object(&self) -> Value {
        let mut object = serde_json::json!({ "required": self.required });
        if !self.description.is_empty() {
            object["description"] = self.description.into();
        }
        if let Some(content) = self.content.object(self.media) {
            object["content"] = content;
        }
        object
    }
}

/// A successful answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) description: &'static str,
    pub(crate) content: Content,
}

impl Answer {
    /// The response object, with the headers the document gives an answer of this operation.
    pub(crate) fn object(&self, headers: &[&str]) -> Value {
        let mut object = described(self.description, headers);
        if let Some(content) = self.content.object(&["application/json"]) {
            object["content"] = content;
        }
        object
    }
}

/// A response object's description, with references to the headers it carries.
fn described(description: &str, headers: &[&str]) -> Value {
    let mut object = serde_json::json!({ "description": description });
    if !headers.is_empty() {
        let headers: serde_json::Map<String, Value> = headers
            .iter()
            .map(|h| ((*h).to_owned(), reference("headers", h)))
            .collect();
        object["headers"] = headers.into();
    }
    object
}

/// `{"$ref": "#/components/<kind>/<name>"}`.
pub(crate) fn reference(kind: &str, name: &str) -> Value {
    serde_json::json!({ "$ref": format!("#/components/{kind}/{name}") })
}

/// The document's opening.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) title: &'static str,
    pub(crate) version: &'static str,
    pub(crate) description: &'static str,
    pub(crate) servers: fn() -> Value,
    pub(crate) security: fn() -> Value,
    pub(crate) security_schemes: fn() -> Value,
    /// Name and description of each tag operations are grouped by.
    pub(crate) tags: &'static [(&'static str, &'static str)],
}

/// A header answers carry.
#[derive(Debug)]
pub(crate) struct Header {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) schema: fn() -> Value,
}

/// `Accept-Encoding` on a `415`: both APIs read bodies only as they are sent.
pub(crate) const ACCEPT_ENCODING: Header = Header {
    name: "Accept-Encoding",
    description: "With code unsupported_content_encoding: identity, the only content coding a \
                  body may have.",
    schema: || serde_json::json!({"type": "string"}),
};

/// An answer operations share: an error by its status, or `304`.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) name: &'static str,
    pub(crate) status: u16,
    pub(crate) description: &'static str,
    pub(crate) headers: &'static [&'static str],
    /// Whether it holds a problem document (`304` holds nothing).
    pub(crate) problem: bool,
}

impl Response {
    pub(crate) fn object(&self) -> Value {
        let mut object = described(self.description, self.headers);
        if self.problem {
            object["content"] = serde_json::json!({
                "application/problem+json": { "schema": reference("schemas", "Problem") }
            });
        }
        object
    }
}
