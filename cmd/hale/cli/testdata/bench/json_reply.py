# json_reply.py: json_reply.hl in Python: the same 1 MB text parsed 10
# times with json.loads, reading the same fields. (Not json.py, which
# would shadow the json module.)
import json


def main():
    calls = []
    for i in range(3600):
        n = str(i)
        calls.append('{"id": "call_' + n + '_a8f3c2d9e1b7", "type": "function", "function": {"name": "lookup_inventory", '
                     + '"arguments": "{\\"query\\": \\"item ' + n + ' in stock at the central warehouse\\", \\"limit\\": ' + n + ', \\"exact\\": true}"}, '
                     + '"score": ' + repr(i / 7.0) + ', "tags": ["inventory", "read-only", null, false]}')
    text = ('{"id": "chatcmpl-9f8e7d6c5b4a", "object": "chat.completion", "created": 1733100000, "model": "gpt-test", '
            + '"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [' + ", ".join(calls)
            + ']}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 812, "completion_tokens": 90210, "total_tokens": 91022}}')
    total = 0
    for _ in range(10):
        reply = json.loads(text)
        message = reply["choices"][0]["message"]
        tools = message["tool_calls"]
        args = tools[-1]["function"]["arguments"]
        total += len(tools) + len(args) + int(reply["usage"]["total_tokens"])
    print(len(text), total)


main()
