//! The commands' way to a running server: its admin API, found through the address file the
//! server writes beside its data (or `--admin-url`), with the admin token from the token file
//! (or `JOB_LISTINGS_ADMIN_TOKEN`).

use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use job_listings::api::admin::AdminToken;

use crate::admin_files;
use crate::cli::StoreArgs;

/// A running server's admin API.
pub(crate) struct Remote {
    base: String,
    token: AdminToken,
    http: reqwest::Client,
}

/// A problem document, as far as the commands read it.
#[derive(Deserialize)]
struct Problem {
    code: String,
    detail: String,
}

impl Remote {
    /// The running server of `store`, if one runs: the one at `--admin-url`, else the one
    /// whose address file is in the data folder and that answers there. An address file
    /// left by a server that is gone (a crash) is passed over: the commands then open the
    /// store themselves.
    pub(crate) async fn find(store: &StoreArgs) -> Result<Option<Self>> {
        let (base, explicit) = match &store.admin_url {
            Some(url) => (url.trim_end_matches('/').to_owned(), true),
            None => match admin_files::read_address(store) {
                Some(url) => (url, false),
                None => return Ok(None),
            },
        };
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .context("setting up the admin API client")?;
        match http
            .get(format!("{base}/livez"))
            .timeout(Duration::from_secs(10))
            .send()
            .await
        {
            Ok(_) => {}
            Err(e) if !explicit && e.is_connect() => return Ok(None),
            Err(e) => bail!("the admin API at {base} does not answer: {e}"),
        }
        let token = admin_files::read_token(store)?;
        Ok(Some(Self { base, token, http }))
    }

    /// Where the admin API is.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// A request to the admin API, with the token.
    pub(crate) fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}/admin/v1{path}", self.base))
            .bearer_auth(self.token.expose())
    }

    /// Sends a request and reads its JSON answer; an error answer becomes an error that
    /// says what the server said, and a 404 `not_found` is `Ok(None)`.
    pub(crate) async fn call<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<Option<T>> {
        let response = request
            .send()
            .await
            .with_context(|| format!("calling the admin API at {}", self.base))?;
        let status = response.status();
        if status.is_success() {
            return response
                .json()
                .await
                .map(Some)
                .with_context(|| format!("reading the admin API's answer ({status})"));
        }
        let problem: Option<Problem> = response.json().await.ok();
        match problem {
            Some(p) if status == StatusCode::NOT_FOUND && p.code == "not_found" => Ok(None),
            Some(p) => Err(anyhow!("the server refused: {} ({})", p.detail, p.code)),
            None => Err(anyhow!("the admin API at {} answered {status}", self.base)),
        }
    }
}
