//! The `command` provider: any program that reads a prompt on stdin and prints the answer (an
//! agent CLI a team already pays for, a local model runner, a script). It gets an argument
//! vector, never a shell; runs in the workspace in its own process group, killed whole at the
//! time limit; and its output is bounded.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use super::{LlmError, ProviderReply, ProviderRequest, Role, estimate_tokens};
use crate::config::LlmConfig;
use crate::process::{self, Exit, ToolCommand};

/// The most bytes of an answer read from the command.
const MAX_OUTPUT_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug)]
pub(super) struct CommandProvider {
    program: PathBuf,
    args: Vec<String>,
    workdir: PathBuf,
}

impl CommandProvider {
    pub(super) fn new(config: &LlmConfig, workdir: PathBuf) -> Result<CommandProvider, LlmError> {
        let (program, args) = config
            .command
            .split_first()
            .ok_or_else(|| LlmError::Incomplete {
                provider: "command",
                what: "a program: set [llm] command = [\"program\", \"arg\", …]".to_string(),
            })?;
        Ok(CommandProvider {
            program: PathBuf::from(program),
            args: args.to_vec(),
            workdir,
        })
    }
}

/// The schema instruction appended when the protocol cannot enforce the schema itself.
pub(super) fn schema_instruction(schema: &Value) -> String {
    format!(
        "\n\nAnswer with one JSON object and nothing else (no prose, no Markdown fence). It must \
         match this JSON Schema:\n{}",
        serde_json::to_string(schema).unwrap_or_default()
    )
}

/// One text holding the whole conversation, for a program that takes a single prompt.
fn flatten(request: &ProviderRequest<'_>) -> String {
    let mut prompt = String::new();
    prompt.push_str(request.system);
    prompt.push_str(&schema_instruction(request.schema));
    for message in request.messages {
        let heading = match message.role {
            Role::User => "\n\n## Request\n\n",
            Role::Assistant => "\n\n## Your previous answer\n\n",
        };
        prompt.push_str(heading);
        prompt.push_str(&message.content);
    }
    prompt.push('\n');
    prompt
}

impl super::Provider for CommandProvider {
    fn complete(
        &self,
        request: &ProviderRequest<'_>,
        requests: &mut u32,
    ) -> Result<ProviderReply, LlmError> {
        let timeout = request.limits.attempt()?;
        let prompt = flatten(request);
        let program = display_program(&self.program);
        let command = ToolCommand::new(&self.program, &self.workdir)
            .args(self.args.iter())
            .stdin(prompt.clone().into_bytes());
        *requests += 1;
        let unwatched = crate::control::Control::default();
        let output = process::run(
            &command,
            Instant::now() + timeout,
            MAX_OUTPUT_BYTES,
            request.stop.unwrap_or(&unwatched),
        )
        .map_err(|err| LlmError::Command {
            program: program.clone(),
            message: format!("cannot start it: {err}"),
        })?;
        let stderr = || super::http::snippet(&String::from_utf8_lossy(&output.stderr));
        match output.exit {
            Exit::Code(0) => {}
            // Stopped by the caller (its own time limit ran out, or it was cancelled): the
            // process group is gone either way, and the call reads as timed out.
            Exit::TimedOut | Exit::Cancelled => return Err(request.limits.timed_out(timeout)),
            Exit::Code(code) => {
                return Err(LlmError::Command {
                    program,
                    message: format!("exit code {code}: {}", stderr()),
                });
            }
            Exit::Signal(signal) => {
                return Err(LlmError::Command {
                    program,
                    message: format!("killed by signal {signal}: {}", stderr()),
                });
            }
        }
        if output.stdout_truncated {
            return Err(LlmError::Command {
                program,
                message: format!("its answer is longer than {MAX_OUTPUT_BYTES} bytes"),
            });
        }
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        Ok(ProviderReply {
            input_tokens: estimate_tokens(&prompt) as u64,
            output_tokens: estimate_tokens(&text) as u64,
            text,
            model: None,
        })
    }
}

fn display_program(program: &Path) -> String {
    program.display().to_string()
}
