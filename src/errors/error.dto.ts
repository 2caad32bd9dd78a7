import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The body of every error response. */
@ApiSchema({ name: 'Error' })
export class ErrorDto {
  @ApiProperty({
    type: 'integer',
    format: 'int32',
    description: 'The HTTP status code of the response',
    example: 400,
  })
  error: number;

  @ApiProperty({
    description: 'What was wrong, in words a client developer can act on',
    minLength: 1,
    example: 'name must not be empty',
  })
  message: string;

  constructor(error: number, message: string) {
    this.error = error;
    this.message = message;
  }
}
