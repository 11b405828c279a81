//! Participant groups (docs/prolific.md, "Exclusion across studies"): one
//! per benchmark, found by name before one is made (a create whose answer
//! was lost is found the next time), its id kept in `prolific_groups`. Who
//! makes one claims its name there first (an empty id), so two servers, or
//! a server and the CLI, deciding at once make one group, not two.
use super::client::Client;
use crate::domain::ids::StudyId;
use crate::error::ServiceError;
use serde_json::{json, Value};
use sqlx::AnyPool;

/// The workspace groups live in: the one named, or the token's only
/// workspace (Prolific lists groups per workspace, and needs one to make one).
pub async fn workspace_of(client: &Client, named: Option<&str>) -> Result<String, ServiceError> {
    if let Some(w) = named {
        return Ok(w.to_string());
    }
    let body = client.expect("GET", "/api/v1/workspaces/", None).await?;
    let ids: Vec<&str> = body["results"].as_array().into_iter().flatten().filter_map(|w| w["id"].as_str()).collect();
    match ids.as_slice() {
        [only] => Ok(only.to_string()),
        _ => Err(ServiceError::Invalid(format!(
            "the token reaches {} workspaces: name one ([prolific] workspace or --workspace)",
            ids.len()
        ))),
    }
}

/// The workspace's currency (its balance's `currency_code`, which the
/// reference says all its money is in). None when it cannot be read: the
/// token reaches several workspaces and none is named, or Prolific did not
/// answer; then the lowest of Prolific's minimum pays is checked, and
/// Prolific refuses the draft itself if it is under its own.
pub async fn currency_of(client: &Client, named: Option<&str>) -> Option<String> {
    let workspace = workspace_of(client, named).await.ok()?;
    let balance = client.expect("GET", &format!("/api/v1/workspaces/{workspace}/balance/"), None).await;
    match balance {
        Ok(b) => b["currency_code"].as_str().map(str::to_string),
        Err(e) => {
            tracing::warn!(error = %e, "reading the workspace's currency");
            None
        }
    }
}

async fn list(client: &Client, workspace: &str) -> Result<Vec<Value>, ServiceError> {
    let body = client.expect("GET", &format!("/api/v1/participant-groups/?workspace_id={workspace}"), None).await?;
    Ok(body["results"].as_array().cloned().unwrap_or_default())
}

async fn remember(client: &Client, name: &str, id: &str) -> Result<(), ServiceError> {
    sqlx::query("INSERT INTO prolific_groups (name, remote_id) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET remote_id = excluded.remote_id")
        .bind(name)
        .bind(id)
        .execute(client.db())
        .await?;
    Ok(())
}

/// The group's id, once made (an empty id is a claim: being made).
async fn known(db: &AnyPool, name: &str) -> Result<Option<String>, ServiceError> {
    let id: Option<String> = sqlx::query_scalar("SELECT remote_id FROM prolific_groups WHERE name = $1")
        .bind(name)
        .fetch_optional(db)
        .await?;
    Ok(id.filter(|id| !id.is_empty()))
}

/// How long a claim is waited for before its maker is taken for dead.
const CLAIM_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

async fn find(client: &Client, name: &str, workspace: &str) -> Result<Option<String>, ServiceError> {
    if let Some(id) = known(client.db(), name).await? {
        return Ok(Some(id));
    }
    let found = list(client, workspace)
        .await?
        .into_iter()
        .find(|g| g["name"].as_str() == Some(name) && g["is_deleted"] != true)
        .and_then(|g| g["id"].as_str().map(str::to_string));
    if let Some(id) = &found {
        remember(client, name, id).await?;
    }
    Ok(found)
}

/// The ids of groups named `names`: a name Prolific has no group for is an error.
pub async fn ids_of(client: &Client, names: &[String], workspace: Option<&str>) -> Result<Vec<String>, ServiceError> {
    let mut out = Vec::new();
    if names.is_empty() {
        return Ok(out);
    }
    let workspace = workspace_of(client, workspace).await?;
    for name in names {
        let id = find(client, name, &workspace).await?.ok_or_else(|| {
            ServiceError::Invalid(format!("Prolific has no participant group named {name:?} to block"))
        })?;
        out.push(id);
    }
    Ok(out)
}

/// The group named `name`, made in `workspace` when none exists.
pub async fn ensure(client: &Client, name: &str, workspace: Option<&str>) -> Result<String, ServiceError> {
    let workspace = workspace_of(client, workspace).await?;
    if let Some(id) = find(client, name, &workspace).await? {
        return Ok(id);
    }
    let claimed =
        sqlx::query("INSERT INTO prolific_groups (name, remote_id) VALUES ($1, '') ON CONFLICT (name) DO NOTHING")
            .bind(name)
            .execute(client.db())
            .await?
            .rows_affected()
            == 1;
    if !claimed {
        // Another maker: its group, once made; or, after its claim went stale, one Prolific has.
        let until = std::time::Instant::now() + CLAIM_WAIT;
        while std::time::Instant::now() < until {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            if let Some(id) = known(client.db(), name).await? {
                return Ok(id);
            }
        }
        if let Some(id) = find(client, name, &workspace).await? {
            return Ok(id);
        }
    }
    let made = client
        .expect("POST", "/api/v1/participant-groups/", Some(&json!({ "workspace_id": workspace, "name": name })))
        .await;
    let Some(id) = made.as_ref().ok().and_then(|m| m["id"].as_str()).map(str::to_string) else {
        // Unclaimed, so the next decision may make it (a lost answer is found by name then).
        sqlx::query("DELETE FROM prolific_groups WHERE name = $1 AND remote_id = ''")
            .bind(name)
            .execute(client.db())
            .await?;
        return Err(made
            .err()
            .unwrap_or_else(|| ServiceError::Internal("a new participant group without an id".into())));
    };
    remember(client, name, &id).await?;
    Ok(id)
}

/// The id of the group a study's finishers join: `name`, else the spec's
/// `group` (default `hardneg-<dataset>`), made when missing. A dry run
/// (`client` None) makes nothing, and names a group not yet made.
pub async fn finishers_group(
    db: &AnyPool,
    client: Option<&Client>,
    study: StudyId,
    name: Option<String>,
    workspace: Option<String>,
) -> Result<Option<String>, ServiceError> {
    let (_, _, spec) = super::settings::settings(db, study).await?;
    let Some(name) = name.or(spec.group) else { return Ok(None) };
    match client {
        Some(c) => ensure(c, &name, workspace.or(spec.workspace).as_deref()).await.map(Some),
        None => Ok(Some(known(db, &name).await?.unwrap_or_else(|| format!("(the group {name}, made when sent)")))),
    }
}
