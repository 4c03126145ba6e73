import * as vscode from "vscode";
import { createBuiltinRegistry, parseRecipes, type HandlerRegistry, type ProcessPool, type Recipe } from "./handlers";

/**
 * The machine's handlers: built-ins plus the owner's recipes. Recipes are read only from the USER's
 * machine-scoped settings (`inspect().globalValue`), so a workspace can never add a command to run.
 */
export function createEngineHandlers(log: vscode.LogOutputChannel): { registry: HandlerRegistry; pool: ProcessPool } {
  const config = vscode.workspace.getConfiguration("farmhand");
  return createBuiltinRegistry({
    pool: { niceness: 19 },
    ollama: { url: config.get<string>("ollamaUrl") || undefined },
    recipes: readRecipes(log),
  });
}

function readRecipes(log: vscode.LogOutputChannel): Recipe[] {
  const declared = vscode.workspace.getConfiguration("farmhand").inspect<Record<string, unknown>>("recipes")?.globalValue;
  if (!declared || Object.keys(declared).length === 0) return [];
  try {
    return parseRecipes(declared);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error(`farmhand.recipes ignored: ${message}`);
    void vscode.window.showErrorMessage(`Farmhand: your recipes setting has problems and was ignored. ${message}`, "Open Settings").then(
      (choice) => choice && vscode.commands.executeCommand("workbench.action.openSettings", "farmhand.recipes"),
    );
    return [];
  }
}
