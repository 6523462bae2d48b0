//! What every [`TaskStore`] must do, as one check an implementation's tests can run.

use crate::protocol::{ErrorObject, TaskStatus};
use crate::task::{TaskRecord, TaskStore, TaskStoreError, now_ms};

/// Checks that `store` keeps the contract the server relies on: a created record is found at
/// once, an id is created only once, `put` replaces a record whole (status, input requests,
/// result, error) unless the stored one is over, records round-trip unchanged, an expired record is not returned, and `delete`
/// forgets. Uses ids that start with `contract-` and a random suffix; deletes what it made.
///
/// Run it in the tests of a store kept elsewhere (Redis, a database):
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// typed_mcp::testing::assert_task_store_contract(&typed_mcp::task::MemoryTaskStore::new()).await;
/// # }
/// ```
///
/// # Panics
///
/// Panics, saying which rule, when the store breaks one (or fails).
pub async fn assert_task_store_contract(store: &dyn TaskStore) {
    let suffix = crate::multi_round::new_chain();
    let id = format!("contract-{suffix}");
    let mut record = TaskRecord::new(id.clone(), Some("alice".into()), Some(60_000), Some(250));
    store.create(&record).await.expect("create stores a new record");
    let found = store.get(&id).await.expect("get succeeds").expect("a created record is found at once");
    assert_eq!(found, record, "a record reads back as it was written");
    match store.create(&record).await {
        Err(TaskStoreError::Exists(existing)) => assert_eq!(existing, id, "Exists names the id"),
        other => panic!("creating an id twice must fail with TaskStoreError::Exists, got {other:?}"),
    }

    record.status = TaskStatus::InputRequired;
    record.status_message = Some("waiting for the user".into());
    record.input_requests.insert(
        "input-0".into(),
        serde_json::json!({"method": "elicitation/create", "params": {"message": "Go on?", "requestedSchema": {"type": "object"}}}),
    );
    record.last_updated_at_ms = record.created_at_ms + 1;
    store.put(&record).await.expect("put replaces a record");
    assert_eq!(store.get(&id).await.expect("get succeeds").as_ref(), Some(&record), "put replaces the whole record");

    record.status = TaskStatus::Failed;
    record.input_requests.clear();
    record.error = Some(ErrorObject::internal("broke down").with_data(serde_json::json!({"step": 3})));
    store.put(&record).await.expect("put replaces a record");
    assert_eq!(store.get(&id).await.expect("get succeeds").as_ref(), Some(&record), "an error reads back unchanged");
    let mut late = record.clone();
    late.status = TaskStatus::Working;
    late.error = None;
    store.put(&late).await.expect("put succeeds");
    assert_eq!(store.get(&id).await.expect("get succeeds").as_ref(), Some(&record), "a task that ended stays ended");

    let completed_id = format!("contract-completed-{suffix}");
    let mut completed = TaskRecord::new(completed_id.clone(), None, None, None);
    completed.status = TaskStatus::Completed;
    completed.result = Some(serde_json::json!({"content": [{"type": "text", "text": "done"}], "isError": false}));
    store.put(&completed).await.expect("put stores a record that is not there");
    assert_eq!(store.get(&completed_id).await.expect("get succeeds").as_ref(), Some(&completed));

    let expired_id = format!("contract-expired-{suffix}");
    let mut expired = TaskRecord::new(expired_id.clone(), None, Some(1_000), None);
    expired.created_at_ms = now_ms().saturating_sub(5_000);
    store.put(&expired).await.expect("put stores an expired record (or drops it)");
    assert!(store.get(&expired_id).await.expect("get succeeds").is_none(), "a record past its ttl is not returned");

    assert!(store.get(&format!("contract-unknown-{suffix}")).await.expect("get succeeds").is_none());
    for id in [&id, &completed_id, &expired_id] {
        store.delete(id).await.expect("delete succeeds");
        assert!(store.get(id).await.expect("get succeeds").is_none(), "a deleted record is gone");
    }
    store.delete(&id).await.expect("deleting an unknown id succeeds");
}
