//! Participant groups (docs/prolific.md, "Exclusion across studies"): one
//! per benchmark, found by name before one is made (a create whose answer
//! was lost is found the next time), its id kept in `prolific_groups`.
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

async fn known(db: &AnyPool, name: &str) -> Result<Option<String>, ServiceError> {
    Ok(sqlx::query_scalar("SELECT remote_id FROM prolific_groups WHERE name = $1")
        .bind(name)
        .fetch_optional(db)
        .await?)
}

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
    let made = client
        .expect("POST", "/api/v1/participant-groups/", Some(&json!({ "workspace_id": workspace, "name": name })))
        .await?;
    let id =
        made["id"].as_str().ok_or_else(|| ServiceError::Internal("a new participant group without an id".into()))?;
    remember(client, name, id).await?;
    Ok(id.to_string())
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
