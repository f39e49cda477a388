//! [`KeyStore`] and [`UsageStore`] on sled: key records, and usage counters swapped with
//! compare-and-swap.

use super::*;

#[async_trait]
impl KeyStore for SledStore {
    async fn put_key(&self, key: &ApiKeyRecord) -> StoreResult<()> {
        let (k, v) = (key.id.0.as_bytes().to_vec(), encode(key)?);
        self.durably(move |s| s.keys.insert(k, v).map(drop).map_err(backend))
            .await
    }

    async fn get_key(&self, id: KeyId) -> StoreResult<Option<ApiKeyRecord>> {
        Self::get(&self.keys, id.0.as_bytes())
    }

    async fn scan_keys(&self) -> StoreResult<Vec<ApiKeyRecord>> {
        Self::scan(&self.keys, None, usize::MAX)
    }
}

#[async_trait]
impl UsageStore for SledStore {
    async fn put_usage(&self, counters: &[UsageCounter]) -> StoreResult<()> {
        let mut batch = sled::Batch::default();
        for c in counters {
            batch.insert(c.key_id.0.as_bytes().as_slice(), encode(c)?);
        }
        self.durably(move |s| s.usage.apply_batch(batch).map_err(backend))
            .await
    }

    async fn scan_usage(&self) -> StoreResult<Vec<UsageCounter>> {
        Self::scan(&self.usage, None, usize::MAX)
    }

    async fn swap_usage(
        &self,
        expected: Option<UsageCounter>,
        new: UsageCounter,
    ) -> StoreResult<bool> {
        self.durably(move |s| {
            s.update_usage(new.key_id, |stored| (stored == expected).then_some(new))
                .map(|swapped| swapped.is_some())
        })
        .await
    }

    async fn get_usage(&self, key_id: KeyId) -> StoreResult<Option<UsageCounter>> {
        Self::get(&self.usage, key_id.0.as_bytes())
    }
}
