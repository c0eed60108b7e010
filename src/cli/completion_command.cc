// suanli completion bash|zsh|fish: a shell completion script, generated from the command table
// as CLI11 holds it (commands, their subcommands and flags), so it cannot drift from the commands.
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace suanli::cli {
namespace {

// A command word and what may follow it: its subcommands and its long flags.
struct Words {
  std::vector<std::string> subcommands;
  std::vector<std::string> flags;
};

std::vector<std::string> LongFlags(const CLI::App& app) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) flags.push_back("--" + name);
  }
  return flags;
}

// "" -> the top level; "pods" -> pods; "pods create" -> pods create.
std::map<std::string, Words> CommandTree(const CLI::App& root) {
  std::map<std::string, Words> tree;
  Words& top = tree[""];
  top.flags = LongFlags(root);
  for (const CLI::App* command : root.get_subcommands({})) {
    top.subcommands.push_back(command->get_name());
    Words& words = tree[command->get_name()];
    words.flags = LongFlags(*command);
    for (const CLI::App* sub : command->get_subcommands({})) {
      words.subcommands.push_back(sub->get_name());
      tree[command->get_name() + " " + sub->get_name()].flags = LongFlags(*sub);
    }
  }
  return tree;
}

std::string Join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// Bash (and zsh through bashcompinit): the first two words that are not flags pick the list.
std::string BashScript(const std::map<std::string, Words>& tree) {
  std::string script =
      "# suanli completion for bash: source it, or put it in "
      "/etc/bash_completion.d/suanli\n"
      "_suanli() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" depth=0 i word\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    word=\"${COMP_WORDS[i]}\"\n"
      "    case \"$word\" in\n"
      "      --url|--token|--prices) ((i++)) ;;\n"
      "      -*) ;;\n"
      "      *) if ((depth < 2)); then path=\"${path:+$path }$word\"; ((depth++)); fi ;;\n"
      "    esac\n"
      "  done\n"
      "  local words=\"\"\n"
      "  case \"$path\" in\n";
  for (const auto& [path, words] : tree) {
    std::vector<std::string> all = words.subcommands;
    all.insert(all.end(), words.flags.begin(), words.flags.end());
    script += "    \"" + path + "\") words=\"" + Join(all) + "\" ;;\n";
  }
  script +=
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}\n"
      "complete -F _suanli suanli\n";
  return script;
}

std::string ZshScript(const std::map<std::string, Words>& tree) {
  return "#compdef suanli\n"
         "# suanli completion for zsh: the bash completion through bashcompinit\n"
         "autoload -U +X bashcompinit && bashcompinit\n" +
         BashScript(tree);
}

std::string FishScript(const std::map<std::string, Words>& tree) {
  std::string script =
      "# suanli completion for fish: save as ~/.config/fish/completions/suanli.fish\n"
      "complete -c suanli -f\n";
  const Words& top = tree.at("");
  for (const std::string& command : top.subcommands) {
    script += "complete -c suanli -n __fish_use_subcommand -a " + command + "\n";
  }
  for (const std::string& flag : top.flags)
    script += "complete -c suanli -l " + flag.substr(2) + "\n";
  for (const std::string& command : top.subcommands) {
    const Words& words = tree.at(command);
    const std::string seen = "'__fish_seen_subcommand_from " + command + "'";
    for (const std::string& sub : words.subcommands) {
      script += "complete -c suanli -n " + seen + " -a " + sub + "\n";
    }
    for (const std::string& flag : words.flags) {
      script += "complete -c suanli -n " + seen + " -l " + flag.substr(2) + "\n";
    }
  }
  return script;
}

}  // namespace

CommandRun DefineCompletionCommand(CLI::App& command) {
  auto shell = std::make_shared<std::string>();
  command.add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  CLI::App* root = command.get_parent();
  return [shell, root](CommandContext& context) -> core::Status {
    const std::map<std::string, Words> tree = CommandTree(*root);
    if (*shell == "bash") {
      context.out << BashScript(tree);
    } else if (*shell == "zsh") {
      context.out << ZshScript(tree);
    } else {
      context.out << FishScript(tree);
    }
    return core::Status::Ok();
  };
}

}  // namespace suanli::cli
