/** `harnessweaver.max_messages`: a bound on how long a conversation sent to the model gets (python's messages.py). */

import { Block } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { finite, settingsSchema } from "./settings.js";

export const maxMessages = configurable(
  { name: "max_messages", hooks: ["model.before"], failMode: "closed", settings: settingsSchema("max_messages") },
  (given) => {
    const limit = finite(given)["limit"] as number;
    return async (event) => {
      const count = event.request.messages.length;
      if (count <= limit) return null;
      return Block(`the request has ${count} messages, more than ${limit}`, { code: "too_many_messages" });
    };
  },
);
