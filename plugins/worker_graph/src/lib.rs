//! `worker_graph`: the UROM graph sample plugin, written with the doca-urom plugin SDK.
//!
//! One command, LOOPBACK (`{ u64 type = 0; u64 data }`, exactly 16 bytes): answered with
//! the notification `{ u64 type = 0; u64 data }` and status SUCCESS. Anything else is
//! answered with INVALID_VALUE (wrong length) or NOT_SUPPORTED (unknown type).

use doca_urom::sdk::{Command, PluginContext, Reply, UromPlugin, Wakeup};
use doca_urom::DocaError;

/// `UROM_WORKER_CMD_GRAPH_LOOPBACK`.
pub const CMD_LOOPBACK: u64 = 0;

/// The plugin (stateless).
pub struct Graph;

impl UromPlugin for Graph {
    fn open(_ctx: &PluginContext) -> Result<Self, DocaError> {
        Ok(Graph)
    }

    fn command(&mut self, _ctx: &PluginContext, cmd: Command<'_>, out: &mut Vec<Reply>) {
        if cmd.payload.len() != 16 {
            out.push(cmd.reply(Err(DocaError::INVALID_VALUE), Vec::new()));
            return;
        }
        let kind = u64::from_le_bytes(cmd.payload[..8].try_into().expect("8 bytes"));
        if kind != CMD_LOOPBACK {
            out.push(cmd.reply(Err(DocaError::NOT_SUPPORTED), Vec::new()));
            return;
        }
        // The notification has the command's layout: echo it.
        out.push(cmd.reply(Ok(()), cmd.payload.to_vec()));
    }

    fn arm_wakeup(&mut self) -> Wakeup {
        // Every reply comes from a command: the worker may sleep until the next one.
        Wakeup::CommandsOnly
    }
}

doca_urom::export_plugin!(Graph);
