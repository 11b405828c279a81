//! Participant groups (docs/prolific.md, "Exclusion across studies"): one
//! per benchmark, found by name before one is made (a create whose answer
//! was lost is found the next time), its id kept in `prolific_groups`.
use super::client::Client;
use crate::error::ServiceError;
use serde_json::{json, Value};

async fn list(client: &Client, workspace: Option<&str>) -> Result<Vec<Value>, ServiceError> {
    let path = match workspace {
        Some(w) => format!("/api/v1/participant-groups/?workspace_id={w}"),
        None => "/api/v1/participant-groups/".to_string(),
    };
    let body = client.expect("GET", &path, None).await.map_err(ServiceError::Internal)?;
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

async fn known(client: &Client, name: &str) -> Result<Option<String>, ServiceError> {
    Ok(sqlx::query_scalar("SELECT remote_id FROM prolific_groups WHERE name = $1")
        .bind(name)
        .fetch_optional(client.db())
        .await?)
}

async fn find(client: &Client, name: &str, workspace: Option<&str>) -> Result<Option<String>, ServiceError> {
    if let Some(id) = known(client, name).await? {
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
    for name in names {
        let id = find(client, name, workspace).await?.ok_or_else(|| {
            ServiceError::Invalid(format!("Prolific has no participant group named {name:?} to block"))
        })?;
        out.push(id);
    }
    Ok(out)
}

/// The group named `name`, made in `workspace` when none exists.
pub async fn ensure(client: &Client, name: &str, workspace: Option<&str>) -> Result<String, ServiceError> {
    if let Some(id) = find(client, name, workspace).await? {
        return Ok(id);
    }
    let Some(workspace) = workspace else {
        return Err(ServiceError::Invalid(format!(
            "making the participant group {name:?} needs the workspace id ([prolific] workspace or --workspace)"
        )));
    };
    let made = client
        .expect("POST", "/api/v1/participant-groups/", Some(&json!({ "workspace_id": workspace, "name": name })))
        .await
        .map_err(ServiceError::Invalid)?;
    let id =
        made["id"].as_str().ok_or_else(|| ServiceError::Internal("a new participant group without an id".into()))?;
    remember(client, name, id).await?;
    Ok(id.to_string())
}
