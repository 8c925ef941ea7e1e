//! One open PostgreSQL transaction behind the repository traits (`&self` methods over the
//! driver's `&mut` transaction), with the conversions every repository shares.

use std::cell::RefCell;

use postgres::types::ToSql;
use postgres::{Row, Transaction};

use super::super::StoreError;
use super::super::repo::{ReadTx, WriteTx};

/// Statement parameters.
pub(super) type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

/// The repositories of one transaction. Every method borrows the transaction for one statement,
/// so a repository method may call another.
pub(in crate::store) struct PgTx<'t, 'c> {
    tx: RefCell<&'t mut Transaction<'c>>,
}

impl<'t, 'c> PgTx<'t, 'c> {
    pub(super) fn new(tx: &'t mut Transaction<'c>) -> PgTx<'t, 'c> {
        PgTx {
            tx: RefCell::new(tx),
        }
    }

    /// Runs a statement; how many rows it changed.
    pub(super) fn exec(&self, sql: &str, params: Params<'_>) -> Result<u64, StoreError> {
        Ok(self.tx.borrow_mut().execute(sql, params)?)
    }

    pub(super) fn rows(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, StoreError> {
        Ok(self.tx.borrow_mut().query(sql, params)?)
    }

    pub(super) fn row(&self, sql: &str, params: Params<'_>) -> Result<Option<Row>, StoreError> {
        Ok(self.tx.borrow_mut().query_opt(sql, params)?)
    }

    /// The single value of a query that returns exactly one row.
    pub(super) fn one(&self, sql: &str, params: Params<'_>) -> Result<Row, StoreError> {
        Ok(self.tx.borrow_mut().query_one(sql, params)?)
    }
}

impl ReadTx for PgTx<'_, '_> {}
impl WriteTx for PgTx<'_, '_> {}

/// A stored count or number as the `u32` the domain uses (negative: 0, too large: the maximum).
pub(super) fn u32_of(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

pub(super) fn u64_of(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

pub(super) fn i64_of(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
